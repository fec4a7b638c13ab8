import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";

/**
 * The repository is self-contained: a clone holds every document its code,
 * tests and docs cite. A rule is cited by the docs section that states it
 * (`docs/api.md#errors`) or by a public URL, never by a file beside the
 * repository, and every `docs/*.md#anchor` names a heading that exists.
 */

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const THIS_FILE = relative(ROOT, fileURLToPath(import.meta.url));

/** Citations of documents a clone does not have, each with what it is. */
const OUTSIDE_CITATIONS: readonly { pattern: RegExp; what: string }[] = [
  { pattern: /\bSPEC\s*§/i, what: "a section of an outside specification" },
  { pattern: /\bSPEC\.md\b/i, what: "an outside specification" },
  { pattern: /\bproviders\.md\s*§/, what: "a section of outside research notes" },
  { pattern: /\bresearch\/[\w-]+\.md\b/, what: "outside research notes" },
  { pattern: /\.\.\/(?:\.\.\/)*shared\b/, what: "a folder beside the repository" },
  { pattern: /(?<![\w.])\/work\//, what: "a path on one machine" },
  // a numbered rule (§12.6) is an outside document's: the docs are cited by section name; RFCs keep theirs
  { pattern: /(?<!RFC \d+ )§\s?1[0-3]\.\d+/, what: "a numbered rule of an outside document" },
];

/** Every tracked file a citation could hide in: recorded traffic in test/fixtures is copied unchanged from its source, so only its README is ours. */
function ownFiles(): string[] {
  const tracked = execFileSync("git", ["ls-files", "-z"], { cwd: ROOT, encoding: "utf8" }).split("\0").filter(Boolean);
  return tracked.filter(
    (file) => file !== THIS_FILE && (!file.startsWith("test/fixtures/") || file === "test/fixtures/README.md") && existsSync(join(ROOT, file)),
  );
}

function outsideCitations(file: string, text: string): string[] {
  const found: string[] = [];
  text.split("\n").forEach((line, index) => {
    for (const { pattern, what } of OUTSIDE_CITATIONS) {
      if (pattern.test(line)) found.push(`${file}:${index + 1}: cites ${what}: ${line.trim().slice(0, 160)}`);
    }
  });
  return found;
}

/** A heading's anchor as GitHub makes it: its text lowercased, punctuation removed, each space a hyphen. */
function githubAnchor(heading: string): string {
  const text = heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1") // a link counts by its text
    .replace(/<[^>]+>/g, "")
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "").replace(/ /g, "-");
}

/** The anchors a Markdown file offers: its headings (outside code fences, repeats numbered -1, -2…) and explicit `<a id>`/`<a name>`. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (/^ {0,3}(```|~~~)/.test(line)) fenced = !fenced;
    if (fenced) continue;
    for (const match of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(match[1]!);
    const heading = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line);
    if (!heading) continue;
    const anchor = githubAnchor(heading[1]!);
    const repeats = seen.get(anchor) ?? 0;
    seen.set(anchor, repeats + 1);
    anchors.add(repeats === 0 ? anchor : `${anchor}-${repeats}`);
  }
  return anchors;
}

/**
 * Links into a Markdown file of the repository with an anchor: `docs/x.md#a`
 * from anywhere (as code comments write them, from the repository root),
 * `x.md#a` relative to the file, and `(#a)` within a Markdown file. A URL's
 * path is not one (it is preceded by `/`).
 */
function anchorLinks(file: string, text: string): { line: number; target: string; anchor: string }[] {
  const links: { line: number; target: string; anchor: string }[] = [];
  text.split("\n").forEach((line, index) => {
    for (const match of line.matchAll(/(?<![\w/.:-])((?:\.{1,2}\/)*[\w-][\w./-]*?\.md)#([\p{L}\p{N}_-]+)/gu)) {
      const path = match[1]!;
      const target = path.startsWith("docs/") ? path : normalize(join(dirname(file), path));
      links.push({ line: index + 1, target, anchor: match[2]! });
    }
    if (file.endsWith(".md")) {
      for (const match of line.matchAll(/\]\(#([\p{L}\p{N}_-]+)\)/gu)) links.push({ line: index + 1, target: file, anchor: match[1]! });
    }
  });
  return links;
}

function brokenAnchorLinks(file: string, text: string, anchorsByFile: Map<string, Set<string>>): string[] {
  const broken: string[] = [];
  for (const link of anchorLinks(file, text)) {
    if (!anchorsByFile.has(link.target)) {
      if (!existsSync(join(ROOT, link.target))) {
        broken.push(`${file}:${link.line}: ${link.target}#${link.anchor}: no such file`);
        continue;
      }
      anchorsByFile.set(link.target, anchorsOf(readFileSync(join(ROOT, link.target), "utf8")));
    }
    if (!anchorsByFile.get(link.target)!.has(link.anchor)) broken.push(`${file}:${link.line}: ${link.target}#${link.anchor}: no such heading`);
  }
  return broken;
}

describe("the repository is self-contained", () => {
  const files = ownFiles().map((file) => ({ file, text: readFileSync(join(ROOT, file), "utf8") }));

  test("no file cites a document outside the repository", () => {
    expect(files.length).toBeGreaterThan(100);
    const found = files.flatMap(({ file, text }) => outsideCitations(file, text));
    expect(found.join("\n"), "cite the docs section that states the rule (docs/api.md#errors), or a public URL").toBe("");
  });

  test("every link to a docs section names a heading that exists", () => {
    const anchorsByFile = new Map<string, Set<string>>();
    const broken = files.flatMap(({ file, text }) => brokenAnchorLinks(file, text, anchorsByFile));
    expect(broken.join("\n"), "links whose anchor matches no heading (GitHub's rule: lowercase, punctuation removed, spaces as '-')").toBe("");
    expect(anchorsByFile.size, "the docs files the links point into").toBeGreaterThan(5);
  });
});

describe("the checks themselves", () => {
  test("outside citations are found, public and own references are not", () => {
    const cited = (line: string) => outsideCitations("x.ts", line).length > 0;
    // each written in two halves, so that no search of the tree for such citations finds this list itself
    for (const [head, tail] of [
      ["(SPE", "C §6)"],
      ["see SPE", "C.md"],
      ["spec", " §12.3"],
      ["providers.m", "d §4"],
      ["research/hermes.", "md A.1"],
      ["../sha", "red/fixtures"],
      ["../../sha", "red/x"],
      ["/wo", "rk/main/src"],
      ["revised", " §12.6"],
    ]) {
      const line = head + tail;
      expect(cited(line), line).toBe(true);
    }
    for (const line of [
      "(docs/api.md#errors)",
      "`Retry-After` (RFC 9110 §10.2.3)",
      "a third-party plugin (§10)",
      "https://example.com/work/x",
      "the spec's error shape",
    ]) {
      expect(cited(line), line).toBe(false);
    }
  });

  test("anchors follow GitHub's rule", () => {
    expect(githubAnchor("`POST /v1/chat/completions`")).toBe("post-v1chatcompletions");
    expect(githubAnchor("`GET /v1/events` — the WebSocket stream")).toBe("get-v1events--the-websocket-stream");
    expect(githubAnchor("Soak and kill -9 (`npm run soak`)")).toBe("soak-and-kill--9-npm-run-soak");
    expect(githubAnchor("model_family")).toBe("model_family");
    expect(githubAnchor("State: moving an existing `state.db` into PostgreSQL")).toBe("state-moving-an-existing-statedb-into-postgresql");
    expect([...anchorsOf('# A\n## Usage\n```\n# not a heading\n```\n## Usage\n<a id="local"></a>text')]).toEqual(["a", "usage", "usage-1", "local"]);
  });

  test("links are read from the repository root (docs/…), relative to their file, and within a Markdown file; URLs are not links", () => {
    const links = (file: string, text: string) => anchorLinks(file, text).map((link) => `${link.target}#${link.anchor}`);
    expect(links("src/a.ts", "// see docs/api.md#errors), and docs/routes.md#model_family.")).toEqual(["docs/api.md#errors", "docs/routes.md#model_family"]);
    expect(links("docs/api.md", "[dialect](routes.md#dialects) and [below](#errors)")).toEqual(["docs/routes.md#dialects", "docs/api.md#errors"]);
    expect(links("README.md", "[ops](docs/operators.md#decisions)")).toEqual(["docs/operators.md#decisions"]);
    expect(links("docs/x.md", "https://github.com/o/r/blob/main/docs/y.md#z")).toEqual([]);
    expect(brokenAnchorLinks("docs/api.md", "[x](routes.md#no-such-heading)", new Map())).toEqual([
      "docs/api.md:1: docs/routes.md#no-such-heading: no such heading",
    ]);
  });
});

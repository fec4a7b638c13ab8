import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root: the docs are read from the checkout under test. */
export const REPO = fileURLToPath(new URL("../..", import.meta.url));

export function readDoc(relativePath: string): string {
  return readFileSync(join(REPO, relativePath), "utf8");
}

/** The text under a heading (any level, matched on its whole text), up to the next heading of the same or a higher level. */
export function section(markdown: string, heading: string): string {
  const lines = markdown.split("\n");
  const start = lines.findIndex((line) => /^#{1,6} /.test(line) && line.replace(/^#+ /, "").trim() === heading);
  if (start < 0) throw new Error(`no heading "${heading}"`);
  const level = /^#+/.exec(lines[start]!)![0].length;
  const end = lines.findIndex((line, index) => index > start && new RegExp(`^#{1,${level}} `).test(line));
  return lines.slice(start + 1, end < 0 ? undefined : end).join("\n");
}

/** The rows of the first Markdown table in `text`, header and separator left out, each as its trimmed cells. */
export function tableRows(text: string): string[][] {
  const lines = text.split("\n");
  const start = lines.findIndex((line) => line.startsWith("|"));
  if (start < 0) return [];
  const rows: string[][] = [];
  for (let index = start + 2; index < lines.length && lines[index]!.startsWith("|"); index++) {
    // a pipe inside backticks is no column border
    rows.push(splitRow(lines[index]!));
  }
  return rows;
}

function splitRow(line: string): string[] {
  const cells: string[] = [];
  let cell = "";
  let inCode = false;
  for (const char of line.slice(1, line.trimEnd().endsWith("|") ? line.trimEnd().length - 1 : undefined)) {
    if (char === "`") inCode = !inCode;
    if (char === "|" && !inCode) {
      cells.push(cell.trim());
      cell = "";
    } else cell += char;
  }
  cells.push(cell.trim());
  return cells;
}

/** The backticked words of a cell: "`CARRIERD_HOME`" → ["CARRIERD_HOME"]; "—" → []. */
export function codeSpans(cell: string): string[] {
  return [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1]!);
}

/** README.md and every docs/*.md, with their paths, for checks over all the prose a user reads. */
export function userDocs(): { path: string; text: string }[] {
  const paths = [
    "README.md",
    ...readdirSync(join(REPO, "docs"))
      .filter((name) => name.endsWith(".md"))
      .sort()
      .map((name) => `docs/${name}`),
  ];
  return paths.map((path) => ({ path, text: readDoc(path) }));
}

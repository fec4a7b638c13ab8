import { beforeAll, expect, test } from "vitest";
import { cliCommands, type CliCommand } from "./cli-help.js";
import { userDocs } from "./markdown.js";

/**
 * The commands README.md and docs/*.md show, against the CLI's own
 * definitions (src/cli): each runs from a clone as written, spelled
 * `./bin/carrierd …` everywhere, names a command that exists and only its
 * options; every command and option is documented somewhere.
 */
let commands: Map<string, CliCommand>;
let groups: Set<string>;
beforeAll(async () => {
  commands = await cliCommands();
  groups = new Set([...commands.keys()].map((name) => name.split(" ")[0]!));
});

/** What a reader would type: fenced lines (comments cut) and inline code spans, a paragraph's line breaks joined. */
function shownCommands(text: string): { line: number; command: string }[] {
  const found: { line: number; command: string }[] = [];
  const lines = text.split("\n");
  let fenced = false;
  let paragraph: { start: number; text: string } | undefined;
  const flush = () => {
    if (!paragraph) return;
    for (const match of paragraph.text.matchAll(/`([^`]*\.\/bin\/carrierd[^`]*)`/g)) found.push({ line: paragraph.start, command: match[1]! });
    paragraph = undefined;
  };
  lines.forEach((line, index) => {
    if (line.startsWith("```")) {
      flush();
      fenced = !fenced;
      return;
    }
    if (fenced) {
      const code = line.replace(/\s+#.*$/, "");
      if (code.includes("./bin/carrierd")) found.push({ line: index + 1, command: code });
      return;
    }
    if (line.trim() === "") return flush();
    paragraph = paragraph ? { start: paragraph.start, text: `${paragraph.text} ${line}` } : { start: index + 1, text: line };
  });
  flush();
  return found;
}

test("every command is spelled ./bin/carrierd …, as it runs from a clone", () => {
  const bare = new RegExp(`(?<![./\\w-])carrierd (${[...groups].join("|")})\\b`, "g");
  const problems = userDocs().flatMap(({ path, text }) =>
    text
      .split("\n")
      .flatMap((line, index) => [...line.matchAll(bare)].map((match) => `${path}:${index + 1}: write ./bin/carrierd ${match[1]} (found "${match[0]}")`)),
  );
  expect(problems).toEqual([]);
});

test("every command shown names a command the CLI has, with options it takes", () => {
  const problems: string[] = [];
  for (const { path, text } of userDocs()) {
    for (const { line, command } of shownCommands(text)) {
      const words = command
        .slice(command.indexOf("./bin/carrierd") + "./bin/carrierd".length)
        .trim()
        .split(/\s+/);
      if (words[0] === undefined || /^(|<.*|…|--help)$/.test(words[0])) continue; // "./bin/carrierd <command> --help", "./bin/carrierd …", "./bin/carrierd --help"
      const name = commands.has(`${words[0]} ${words[1]}`) ? `${words[0]} ${words[1]}` : words[0];
      const known = commands.get(name);
      if (!known) {
        if (!groups.has(name) || words.slice(1).some((word) => word.startsWith("--"))) problems.push(`${path}:${line}: "${command}" names no carrierd command`);
        continue;
      }
      for (const word of words) {
        const option = /^\[?--([a-z][a-z0-9-]*)/.exec(word)?.[1];
        if (option && option !== "help" && !known.options.has(option))
          problems.push(`${path}:${line}: carrierd ${name} has no option --${option} ("${command}")`);
      }
    }
  }
  expect(problems).toEqual([]);
});

test("every command and every option of the CLI is documented", () => {
  const docs = userDocs();
  const all = docs.map(({ text }) => text.replace(/\s+/g, " ")).join("\n");
  const problems: string[] = [];
  for (const command of commands.values()) {
    if (!all.includes(`./bin/carrierd ${command.name}`)) problems.push(`no doc shows ./bin/carrierd ${command.name}: show it where its subject is documented`);
    for (const option of command.options)
      if (!new RegExp(`--${option}\\b`).test(all)) problems.push(`no doc mentions --${option} of carrierd ${command.name}: document it with the command`);
  }
  expect(problems).toEqual([]);
});

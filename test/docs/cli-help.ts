import { cli } from "../../src/cli/cli.js";

/** One command of the CLI as its own `--help` describes it. */
export interface CliCommand {
  /** "keys create", "gateway". */
  readonly name: string;
  /** Its options without the leading dashes, the global ones included ("home", "store", …). */
  readonly options: ReadonlySet<string>;
}

/** `carrierd WORDS --help`, in this process: the text yargs builds from the command definitions in src/cli. */
function help(words: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    void cli([])
      .exitProcess(false)
      .parse([...words, "--help"], {}, (error: Error | undefined, _argv: unknown, output: string) => (error ? reject(error) : resolve(output)));
  });
}

/** The lines of a help section ("Commands:", "Options:") up to the next blank line. */
function helpSection(text: string, title: string): string[] {
  const lines = text.split("\n");
  const start = lines.indexOf(title);
  if (start < 0) return [];
  const end = lines.findIndex((line, index) => index > start && line.trim() === "");
  return lines.slice(start + 1, end < 0 ? undefined : end);
}

/**
 * Every command the CLI offers, found by walking `--help` from the top: a
 * command whose help lists subcommands is a group, the others are what a
 * user runs.
 */
export async function cliCommands(): Promise<Map<string, CliCommand>> {
  const found = new Map<string, CliCommand>();
  const visit = async (words: string[]): Promise<void> => {
    const text = await help(words);
    const children = helpSection(text, "Commands:")
      .map((line) => /^\s+carrierd ((?:[a-z][a-z-]*)(?: [a-z][a-z-]*)*)/.exec(line)?.[1])
      .filter((name): name is string => name !== undefined)
      .map((name) => name.split(" "))
      .filter((child) => child.length > words.length);
    if (children.length > 0) {
      await Promise.all(children.map((child) => visit(child)));
      return;
    }
    const options = new Set(
      helpSection(text, "Options:")
        .map((line) => /^\s+(?:-\w, )?--([a-z][a-z0-9-]*)/.exec(line)?.[1])
        .filter((name): name is string => name !== undefined && name !== "help"),
    );
    found.set(words.join(" "), { name: words.join(" "), options });
  };
  await visit([]);
  return found;
}

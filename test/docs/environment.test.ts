import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { expect, test } from "vitest";
import { cliCommands } from "./cli-help.js";
import { codeSpans, readDoc, REPO, section, tableRows } from "./markdown.js";

/**
 * docs/operators.md, "Flags and environment", against the code: every
 * CARRIERD_* variable the code reads has a row, every row names a variable
 * the code reads, and the flag column matches the CLI's options.
 */
const TABLE = 'docs/operators.md, section "Flags and environment"';

function sourceFiles(dir: string): string[] {
  return readdirSync(join(REPO, dir), { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts") && !file.endsWith(".test.ts"))
    .map((file) => join(REPO, dir, file));
}

/** Each CARRIERD_* (and OpenTelemetry's OTEL_*) variable read from an environment (`env.X`, `process.env.X`, `env["X"]`), with the first file that reads it. */
function variablesInCode(): Map<string, string> {
  const found = new Map<string, string>();
  for (const file of [...sourceFiles("src"), ...sourceFiles("plugins")]) {
    const text = readFileSync(file, "utf8");
    for (const match of text.matchAll(/\benv\??\.((?:CARRIERD|OTEL)_[A-Z0-9_]+)|\benv\[\s*["'`]((?:CARRIERD|OTEL)_[A-Z0-9_]+)["'`]\s*\]/g)) {
      const name = match[1] ?? match[2]!;
      if (!found.has(name)) found.set(name, relative(REPO, file));
    }
  }
  return found;
}

interface Row {
  variable: string;
  flags: string[];
  line: string;
}

function documentedRows(): Row[] {
  return tableRows(section(readDoc("docs/operators.md"), "Flags and environment")).map((cells) => ({
    variable: codeSpans(cells[0] ?? "")[0] ?? cells[0] ?? "",
    flags: codeSpans(cells[1] ?? "").filter((span) => span.startsWith("--")),
    line: `| ${cells.join(" | ")} |`,
  }));
}

test("every CARRIERD_* variable the code reads has a row in the environment table", () => {
  const documented = new Set(documentedRows().map((row) => row.variable));
  const missing = [...variablesInCode()].filter(([name]) => !documented.has(name));
  expect(missing.map(([name, file]) => `${TABLE} lacks ${name} (read in ${file}): add the row | \`${name}\` | \`--flag\` or — | default | meaning |`)).toEqual(
    [],
  );
});

test("every row of the environment table names a variable the code reads", () => {
  const inCode = variablesInCode();
  const stale = documentedRows().filter((row) => !inCode.has(row.variable));
  expect(stale.map((row) => `${TABLE} has a row for ${row.variable}, which no code reads: remove the row ${row.line}`)).toEqual([]);
});

test("the flag column names options the CLI has, and every gateway option is in the table", async () => {
  const commands = await cliCommands();
  const anyCommand = new Set([...commands.values()].flatMap((command) => [...command.options]));
  const rows = documentedRows();
  const unknown = rows.flatMap((row) =>
    row.flags.filter((flag) => !anyCommand.has(flag.slice(2))).map((flag) => `${TABLE}: ${row.variable}'s flag ${flag} is an option of no carrierd command`),
  );
  expect(unknown).toEqual([]);
  const documentedFlags = new Set(rows.flatMap((row) => row.flags.map((flag) => flag.slice(2))));
  const gateway = commands.get("gateway")!;
  const undocumented = [...gateway.options].filter((option) => !documentedFlags.has(option));
  expect(undocumented.map((option) => `${TABLE} lacks \`carrierd gateway --${option}\`: put \`--${option}\` in the flag column of its variable's row`)).toEqual(
    [],
  );
});

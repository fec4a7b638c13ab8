import { relative } from "node:path";
import type { Reporter, SerializedError, TestModule } from "vitest/node";

/**
 * Added after vitest's own reporter: a run that failed ends with one block
 * naming every failed test (and every file or hook that failed outside a
 * test) with the first lines of its error, so the last lines of a log that
 * keeps only its tail still say what failed and why.
 */
export default class FailureSummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>, unhandled: ReadonlyArray<SerializedError>): void {
    const failures: string[] = [];
    for (const module of modules) {
      const file = relative(process.cwd(), module.moduleId);
      for (const error of module.errors()) failures.push(entry(file, error));
      for (const suite of module.children.allSuites()) for (const error of suite.errors()) failures.push(entry(`${file} > ${suite.fullName}`, error));
      for (const test of module.children.allTests("failed")) {
        const result = test.result();
        const errors = result.state === "failed" ? result.errors : [];
        failures.push(entry(`${file} > ${test.fullName}`, errors[0]));
      }
    }
    for (const error of unhandled) failures.push(entry("unhandled error", error));
    if (failures.length === 0) return;
    process.stdout.write(`\nFailed (${failures.length}):\n${failures.join("\n")}\n`);
  }
}

/** How many lines of an error's message the summary keeps. */
const ERROR_LINES = 3;

function entry(where: string, error: SerializedError | undefined): string {
  const text = error?.message ?? "";
  const message = error ? `${error.name && !text.startsWith(error.name) ? `${error.name}: ` : ""}${text}` : "(no error recorded)";
  const lines = message
    .split("\n")
    .map((line) => line.trimEnd())
    .filter(Boolean)
    .slice(0, ERROR_LINES);
  // where it was thrown, in the test's own code when the stack reaches it
  const frame = error?.stacks?.[0];
  if (frame) lines.push(`at ${relative(process.cwd(), frame.file)}:${frame.line}:${frame.column}`);
  return `  FAIL ${where}\n${lines.map((line) => `       ${line}`).join("\n")}`;
}

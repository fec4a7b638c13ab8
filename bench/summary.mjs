// The markdown summaries the benches leave in bench/results/ (git-ignored):
// the tables they print, headed by when and on what they were measured, so a
// run can be read or pasted without scrolling back through its output.
import { cpus, loadavg } from "node:os";
import { mkdirSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const RESULTS = fileURLToPath(new URL("./results/", import.meta.url));

/** When and on what: the date, the processors, Node, and the load average (a shared host moves every figure). */
export function measuredOn() {
  const processors = cpus();
  const load = loadavg()
    .map((value) => value.toFixed(1))
    .join(" / ");
  return `${new Date().toISOString()}: ${processors.length} × ${processors[0]?.model.trim() ?? "unknown CPU"}, Node ${process.version}, load average ${load} (1 / 5 / 15 min)`;
}

/** Writes bench/results/NAME.md: a title, `measuredOn()`, then each section's text. */
export function writeSummary(name, title, sections) {
  mkdirSync(RESULTS, { recursive: true });
  const path = `${RESULTS}${name}.md`;
  writeFileSync(path, `# ${title}\n\n${measuredOn()}\n\n${sections.join("\n\n")}\n`);
  return path;
}

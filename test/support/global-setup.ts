import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isRunning, killGroup, processesMarked, recordedPids, RUN_DIR_VARIABLE, RUN_MARKER_VARIABLE } from "./child-processes.js";

/**
 * The run's safety net: whatever a test started and did not stop (a failed
 * hook, a timeout, a worker that died) is killed, by process group, once
 * every test file is done.
 */
export default function setup(): () => Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "carrierd-suite-"));
  const marker = String(process.pid);
  process.env[RUN_DIR_VARIABLE] = dir;
  process.env[RUN_MARKER_VARIABLE] = marker;
  return async () => {
    const left = new Set([...recordedPids(dir).filter(isRunning), ...processesMarked(RUN_MARKER_VARIABLE, marker)]);
    const named = [...left].map((pid) => `${pid} (${commandLine(pid)})`);
    for (const pid of left) killGroup(pid);
    if (left.size > 0) console.error(`global teardown: killed ${left.size} process(es) the tests left running: ${named.join(", ")}`);
    // SIGKILL is not instant: the run ends once they are gone
    const deadline = Date.now() + 5000;
    while ([...left].some(isRunning) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    rmSync(dir, { recursive: true, force: true });
  };
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim().slice(0, 200);
  } catch {
    return "?";
  }
}

import { spawn, type ChildProcess, type SpawnOptions } from "node:child_process";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * Every process the suite starts outlives nothing: each one is spawned in a
 * process group of its own and recorded, so the per-file cleanup (a setup
 * file's afterAll) and the run's global teardown can kill the whole group,
 * grandchildren included, even when the test or hook that should have
 * stopped it failed, timed out or took its worker down with it.
 */

/** The folder (made by the global setup) where each tracked process leaves a file named by its pid. */
export const RUN_DIR_VARIABLE = "CARRIERD_SUITE_PROCESSES";
/**
 * Set in the environment of the whole run, and inherited by what it starts
 * (the CLI tests' clean environment keeps it): the teardown also finds
 * processes a library started, such as a browser, by it.
 */
export const RUN_MARKER_VARIABLE = "VITEST_RUN_OF_CARRIERD";

const startedHere = new Set<ChildProcess>();

/** Records a started child (its own process group leader) for cleanup. */
export function track<T extends ChildProcess>(child: T): T {
  const pid = child.pid;
  if (pid === undefined) return child;
  startedHere.add(child);
  const dir = process.env[RUN_DIR_VARIABLE];
  const file = dir ? join(dir, String(pid)) : undefined;
  if (file) writeFileSync(file, "");
  child.once("exit", () => {
    startedHere.delete(child);
    if (file) rmSync(file, { force: true });
  });
  return child;
}

/** `spawn`, in a process group of its own, tracked. */
export function spawnTracked(command: string, args: readonly string[], options: SpawnOptions = {}): ChildProcess {
  return track(spawn(command, args, { ...options, detached: true }));
}

/** Kills the process group of every child this worker started that is still running. */
export function killStartedHere(): number {
  let killed = 0;
  for (const child of startedHere) {
    if (child.exitCode === null && child.signalCode === null && killGroup(child.pid!)) killed++;
    startedHere.delete(child);
  }
  return killed;
}

/** SIGKILL to a process group (and to the process, should it have left the group); false when nothing was there. */
export function killGroup(pid: number): boolean {
  let found = false;
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, "SIGKILL");
      found = true;
    } catch {
      // gone already
    }
  }
  return found;
}

/** Pids recorded in the run's folder (processes started by any worker). */
export function recordedPids(dir: string): number[] {
  return readdirSync(dir)
    .map(Number)
    .filter((pid) => Number.isInteger(pid) && pid > 0);
}

/**
 * Running processes (not zombies) whose environment carries `marker=value`,
 * but for the run's own workers (children of this process, which vitest
 * stops itself).
 */
export function processesMarked(marker: string, value: string): number[] {
  const needle = `${marker}=${value}`;
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      if (!isRunning(pid) || parentOf(pid) === process.pid) continue;
      if (readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").includes(needle)) found.push(pid);
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
}

/** True while the process exists and is not a zombie waiting to be reaped. */
export function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

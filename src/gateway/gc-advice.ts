import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";

/**
 * CPUs this process may use: its CPU affinity (`taskset`, a cpuset), and a
 * cgroup v2 quota when one is set (a container's `--cpus`), which Node's
 * `availableParallelism()` does not see.
 */
export function usableCpus(affinity = availableParallelism(), readQuota: () => string = () => readFileSync("/sys/fs/cgroup/cpu.max", "utf8")): number {
  let quota: string;
  try {
    quota = readQuota();
  } catch {
    return affinity; // no cgroup v2 here, or no quota file for this group
  }
  const [limit, period] = quota.trim().split(/\s+/).map(Number);
  if (!limit || !period || !Number.isFinite(limit)) return affinity; // "max": no quota
  return Math.min(affinity, Math.max(1, Math.ceil(limit / period)));
}

/**
 * Advice for a gateway that runs on one CPU: V8's GC helper threads
 * (concurrent marking, parallel scavenging) then take turns with the
 * thread that answers, and the p99 at one connection is about three times
 * what it is with `--single-threaded-gc` (docs/performance.md). Advice, not a
 * setting: V8 cannot change the flag in a running process, and Node does
 * not take it from NODE_OPTIONS, only from its command line.
 * `execArgv`: Node's flags; `script`: the path node ran.
 */
export function gcAdvice(cpus: number, execArgv: readonly string[], script: string): string | undefined {
  if (cpus > 1 || execArgv.some((flag) => /^--single[-_]threaded[-_]gc$/.test(flag))) return undefined;
  return `one CPU available: start the gateway as \`node --single-threaded-gc ${script} gateway\` for shorter tail latency (docs/operators.md)`;
}

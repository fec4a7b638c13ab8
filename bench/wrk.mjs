// Runs wrk (pinned to a core) and reads its latency distribution and throughput.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";

const run = promisify(execFile);
const script = fileURLToPath(new URL("./post.lua", import.meta.url));

/** One wrk run: latency percentiles in ms and requests/s. */
export async function wrk({ url, connections, seconds, bodyFile, key, core, session }) {
  const args = ["-c", String(core), "wrk", "-t", "1", "-c", String(connections), "-d", `${seconds}s`, "--latency", "-s", script, url];
  const { stdout } = await run("taskset", args, { env: { ...process.env, BENCH_BODY: bodyFile, BENCH_KEY: key ?? "", BENCH_SESSION: session ?? "" } });
  const percentile = (p) => toMs(new RegExp(`^\\s+${p}%\\s+([\\d.]+\\w+)`, "m").exec(stdout)?.[1]);
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1] ?? 0);
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(stdout)?.[1] ?? 0);
  if (non2xx > 0) throw new Error(`${url}: ${non2xx} non-2xx responses\n${stdout}`);
  return { p50: percentile(50), p99: percentile(99), rps };
}

function toMs(text) {
  if (!text) return NaN;
  const value = parseFloat(text);
  if (text.endsWith("us")) return value / 1000;
  if (text.endsWith("ms")) return value;
  if (text.endsWith("s")) return value * 1000;
  return NaN;
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

// Runs the load generator (bench/load-client.mjs: autocannon, a devDependency)
// pinned to a core, and reads its latency distribution and throughput.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";

const run = promisify(execFile);
const client = fileURLToPath(new URL("./load-client.mjs", import.meta.url));

/** One run: POSTs `bodyFile` to `url` at `connections` for `seconds`; latency percentiles in ms, requests/s and the requests answered. */
export async function load({ url, connections, seconds, bodyFile, key, core, session }) {
  const options = JSON.stringify({ url, connections, seconds, bodyFile, key, session });
  const { stdout } = await run("taskset", ["-c", String(core), process.execPath, client, options], { maxBuffer: 1 << 20 });
  const result = JSON.parse(stdout);
  if (result.failed > 0 || result.errors > 0)
    throw new Error(`${url}: ${result.failed} non-2xx responses (first: ${result.firstFailure}), ${result.errors} errors`);
  return { p50: result.p50, p99: result.p99, rps: result.rps, requests: result.ok };
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

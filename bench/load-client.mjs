// The load generator, run as its own process pinned to a core (bench/load.mjs
// starts it): autocannon driven in-process, POSTing one body for a while at a
// number of connections, each response's time kept in full (autocannon's own
// histogram counts whole milliseconds; the added latency at one connection is
// a fraction of one). Prints one JSON line: p50 and p99 in ms, req/s, 2xx count.
//   node bench/load-client.mjs '{"url":…,"connections":1,"seconds":3,"bodyFile":…,"key":…}'
import { readFileSync } from "node:fs";
import autocannon from "autocannon";

const { url, connections, seconds, bodyFile, key, session } = JSON.parse(process.argv[2]);
const headers = { "content-type": "application/json" };
if (key) headers.authorization = `Bearer ${key}`;
if (session) headers["x-session-id"] = session;
const times = [];
let failed = 0;
let firstFailure = "";
const started = process.hrtime.bigint();
// no timeout short of minutes: on a busy host a 500 KB request at 64 connections can wait seconds, and a run only ends when its time is up
const instance = autocannon({ url, connections, duration: seconds, timeout: 300, method: "POST", headers, body: readFileSync(bodyFile) }, (error, result) => {
  if (error) throw error;
  const elapsedS = Number(process.hrtime.bigint() - started) / 1e9;
  const sorted = Float64Array.from(times).sort();
  const at = (p) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;
  const out = { p50: at(50), p99: at(99), rps: times.length / elapsedS, ok: times.length, failed, errors: result.errors + result.timeouts, firstFailure };
  process.stdout.write(`${JSON.stringify(out)}\n`);
});
instance.on("response", (client, statusCode, bytes, responseTimeMs) => {
  if (statusCode >= 200 && statusCode < 300) times.push(responseTimeMs);
  else if (failed++ === 0) firstFailure = `status ${statusCode}`;
});

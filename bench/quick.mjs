// A quick A/B while working (not the suite): carrierd and the raw proxy, their
// runs interleaved so both see the same host conditions, at one concurrency,
// with CPU per request from /proc — steadier than req/s on a shared VM.
//   npm run bench:quick                     json and stream at c=64, 3 runs each
//   MODES=stream CONNS=1,64 RUNS=5 TURNS=0 npm run bench:quick
// With PREFILL, carrierd alone on stores pre-filled with that many stored
// turns (bench/prefill.mjs), one fresh store per size, CPU per request each:
//   PREFILL=0,100000,1000000 MODES=json CONNS=1 npm run bench:quick
//   PREFILL=0,100000 BENCH_STORE=postgres npm run bench:quick   (database CPU too)
// With TRACING=1 a third target, carrierd exporting traces and metrics (OTLP/HTTP protobuf) to a loopback
// sink in this process, runs interleaved with the other two: the cost of tracing on, beside tracing off:
//   TRACING=1 MODES=json CONNS=1,16 npm run bench:quick
// With QUICK_CPU_PROF=DIR carrierd runs under node --cpu-prof, its profiles written to DIR
// (then node bench/profile-summary.mjs DIR/*.0.001.cpuprofile):
//   QUICK_CPU_PROF=/tmp/prof MODES=stream CONNS=16 TURNS=0 npm run bench:quick
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildHistory, KEY, startCarrierd } from "./gateway.mjs";
import { measurePrefilled } from "./prefilled-runs.mjs";
import { cpuMsOf, startPinned, stop } from "./processes.mjs";
import { startOtlpSink } from "./otlp-sink.mjs";
import { load, median } from "./load.mjs";

const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const RUNS = Number(process.env.RUNS ?? 3);
const SECONDS = Number(process.env.SECONDS_PER_RUN ?? 3);
const work = mkdtempSync(join(tmpdir(), "carrierd-quick-"));

if (process.env.PREFILL) {
  await measurePrefilled(work, { sizes: process.env.PREFILL.split(",").map(Number), runs: RUNS, seconds: SECONDS });
  process.exit(0);
}
const upstream = await startPinned(1, [here("./upstream.mjs")]);
const profile = process.env.QUICK_CPU_PROF;
const gateway = await startCarrierd(upstream.port, work, { nodeFlags: profile ? ["--cpu-prof", "--cpu-prof-dir", profile] : [] });
const raw = await startPinned(0, [here("./raw-proxy.mjs")], { UPSTREAM: `http://127.0.0.1:${upstream.port}` });
const targets = [
  { name: "carrierd", port: gateway.port, pid: gateway.pid },
  { name: "raw", port: raw.port, pid: raw.pid },
];
const sink = process.env.TRACING === "1" ? await startOtlpSink() : undefined;
const traced = sink ? await startCarrierd(upstream.port, join(work, "traced"), { env: sink.env }) : undefined;
if (traced) targets.splice(1, 0, { name: "carrierd+otel", port: traced.port, pid: traced.pid });
try {
  const messages = await buildHistory(gateway.port, Number(process.env.TURNS ?? 20));
  for (const mode of (process.env.MODES ?? "json,stream").split(",")) {
    const bodyFile = join(work, `${mode}.json`);
    writeFileSync(bodyFile, JSON.stringify({ model: "bench", stream: mode === "stream", messages }));
    for (const connections of (process.env.CONNS ?? "64").split(",").map(Number)) {
      const url = (target) => `http://127.0.0.1:${target.port}/v1/chat/completions`;
      for (const target of targets) await load({ url: url(target), connections, seconds: 2, bodyFile, key: KEY, core: 1 }); // warm-up
      const runs = Object.fromEntries(targets.map((target) => [target.name, []]));
      for (let i = 0; i < RUNS; i++) {
        for (const target of targets) {
          const before = await cpuMsOf(target.pid);
          const run = await load({ url: url(target), connections, seconds: SECONDS, bodyFile, key: KEY, core: 1 });
          run.cpuUs = (((await cpuMsOf(target.pid)) - before) * 1000) / (run.rps * SECONDS);
          runs[target.name].push(run);
        }
      }
      const line = (name) =>
        `${name} p50 ${median(runs[name].map((r) => r.p50)).toFixed(3)} ms, ${median(runs[name].map((r) => r.rps)).toFixed(0)} req/s, CPU ${median(runs[name].map((r) => r.cpuUs)).toFixed(0)} µs/req`;
      const ratio = median(runs.carrierd.map((run, i) => run.rps / runs.raw[i].rps));
      const tracedLine = traced ? ` | ${line("carrierd+otel")}` : "";
      console.log(`${mode} c=${connections}: ${line("carrierd")}${tracedLine} | ${line("raw")} | req/s ratio ${ratio.toFixed(3)}`);
    }
  }
  if (sink)
    console.log(`OTLP sink: ${sink.counts().traces} trace exports, ${sink.counts().metrics} metric exports, ${(sink.counts().bytes / 1e6).toFixed(1)} MB`);
} finally {
  await stop(traced);
  await sink?.close();
  await stop(gateway);
  await stop(raw);
  await stop(upstream);
  rmSync(work, { recursive: true, force: true });
}

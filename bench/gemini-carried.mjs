// The Gemini door on a Gemini route: Gemini CLI's request (its captured
// tool-result turn) on the instant Gemini upstream (gemini-upstream.mjs),
// through this checkout's build and through another's (BEFORE, a checkout
// with its dist/ built), runs interleaved so both see the same host
// conditions. CPU per request from /proc.
//   BEFORE=/tmp/before node bench/gemini-carried.mjs
//   MODES=stream CONNS=1 RUNS=7 BEFORE=/tmp/before node bench/gemini-carried.mjs
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { KEY } from "./gateway.mjs";
import { cpuMsOf, startPinned, stop } from "./processes.mjs";
import { load, median } from "./load.mjs";

const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const RUNS = Number(process.env.RUNS ?? 5);
const SECONDS = Number(process.env.SECONDS_PER_RUN ?? 3);
const work = mkdtempSync(join(tmpdir(), "carrierd-gemini-carried-bench-"));
const checkouts = { after: here(".."), ...(process.env.BEFORE ? { before: process.env.BEFORE } : {}) };

const upstream = await startPinned(1, [here("./gemini-upstream.mjs")]);
const gateways = {};
try {
  for (const [name, checkout] of Object.entries(checkouts)) {
    const dir = join(work, name);
    mkdirSync(join(dir, "home"), { recursive: true });
    const routes = join(dir, "routes.yaml");
    writeFileSync(
      routes,
      `version: 1
providers:
  gemini: { plugin: gemini, base_url: "http://127.0.0.1:${upstream.port}", api_key_env: BENCH_GEMINI_KEY }
models:
  - { name: gemini-3.8-flash, provider: gemini, model: gemini-3-pro-preview }
carriers:
  - match: {}
    fields: [reasoning_content]
`,
    );
    gateways[name] = await startPinned(0, [join(checkout, "bin/carrierd"), "gateway", "--port", "0", "--routes", routes, "--log-level", "warn"], {
      CARRIERD_HOME: join(dir, "home"),
      CARRIERD_API_KEY: KEY,
      BENCH_GEMINI_KEY: "gemini-bench",
    });
  }
  const captured = JSON.parse(readFileSync(here("../test/fixtures/clients/gemini-cli-0.61.0-toolresult-req.json"), "utf8")).body;
  const rows = [];
  for (const mode of (process.env.MODES ?? "json,stream").split(",")) {
    const bodyFile = join(work, `${mode}.json`);
    writeFileSync(bodyFile, JSON.stringify(captured));
    for (const connections of (process.env.CONNS ?? "1,16").split(",").map(Number)) {
      const verb = mode === "stream" ? "streamGenerateContent?alt=sse" : "generateContent";
      const url = (name) => `http://127.0.0.1:${gateways[name].port}/v1beta/models/gemini-3.8-flash:${verb}`;
      for (const name of Object.keys(gateways)) await load({ url: url(name), connections, seconds: 2, bodyFile, key: KEY, core: 1 }); // warm-up
      const runs = Object.fromEntries(Object.keys(gateways).map((name) => [name, []]));
      for (let i = 0; i < RUNS; i++) {
        for (const name of Object.keys(gateways)) {
          const before = await cpuMsOf(gateways[name].pid);
          const run = await load({ url: url(name), connections, seconds: SECONDS, bodyFile, key: KEY, core: 1 });
          run.cpuUs = (((await cpuMsOf(gateways[name].pid)) - before) * 1000) / (run.rps * SECONDS);
          runs[name].push(run);
        }
      }
      for (const name of Object.keys(gateways)) {
        const cpu = runs[name].map((run) => run.cpuUs).sort((a, b) => a - b);
        rows.push({
          build: name,
          mode,
          connections,
          cpu_us_median: Math.round(median(cpu)),
          cpu_us_min: Math.round(cpu[0]),
          cpu_us_max: Math.round(cpu.at(-1)),
          p50_ms: median(runs[name].map((run) => run.p50)),
          rps: Math.round(median(runs[name].map((run) => run.rps))),
        });
      }
    }
  }
  console.table(rows);
} finally {
  for (const gateway of Object.values(gateways)) await stop(gateway);
  await stop(upstream);
  rmSync(work, { recursive: true, force: true });
}

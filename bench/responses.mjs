// What the openai-responses plugin costs against openai-compatible, on the
// same history: one carrierd, two models on the same bench upstream — `bench`
// through openai-compatible (chat completions, a must_echo route) and
// `bench-responses` through openai-responses (the Responses API, each
// replayed turn carrying its reasoning item and a BLOB_BYTES blob) — each
// given its own TURNS-turn history first, then measured with their runs
// interleaved, CPU per request from /proc.
//   npm run bench:responses                         json and stream at c=1 and c=64, 3 runs each
//   MODES=stream CONNS=64 RUNS=5 TURNS=20 BLOB_BYTES=4096 npm run bench:responses
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildHistory, KEY } from "./gateway.mjs";
import { cpuMsOf, startPinned, stop } from "./processes.mjs";
import { load, median } from "./load.mjs";

const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const RUNS = Number(process.env.RUNS ?? 3);
const SECONDS = Number(process.env.SECONDS_PER_RUN ?? 3);
const TURNS = Number(process.env.TURNS ?? 20);
const work = mkdtempSync(join(tmpdir(), "carrierd-responses-"));

const upstream = await startPinned(1, [here("./upstream.mjs")]);
const home = join(work, "home");
mkdirSync(home, { recursive: true });
const routes = join(work, "routes.yaml");
writeFileSync(
  routes,
  `version: 1
providers:
  bench: { plugin: openai-compatible, base_url: "http://127.0.0.1:${upstream.port}/v1" }
  bench-openai: { plugin: openai-responses, base_url: "http://127.0.0.1:${upstream.port}/v1" }
models:
  - { name: bench, provider: bench, model: bench-reasoner }
  - { name: bench-responses, provider: bench-openai, model: gpt-5-bench }
carriers:
  - match: { plugin: openai-responses }
    fields: []
  - match: { provider: bench }
    fields: [reasoning_content]
    must_echo: true
`,
);
const gateway = await startPinned(0, [here("../bin/carrierd"), "gateway", "--port", "0", "--routes", routes, "--log-level", "warn"], {
  CARRIERD_HOME: home,
  CARRIERD_API_KEY: KEY,
});
const models = ["bench", "bench-responses"];
try {
  const histories = {};
  for (const model of models) histories[model] = await buildHistory(gateway.port, TURNS, KEY, { model });
  const url = `http://127.0.0.1:${gateway.port}/v1/chat/completions`;
  for (const mode of (process.env.MODES ?? "json,stream").split(",")) {
    const bodyFiles = {};
    for (const model of models) {
      bodyFiles[model] = join(work, `${model}-${mode}.json`);
      writeFileSync(bodyFiles[model], JSON.stringify({ model, stream: mode === "stream", messages: histories[model] }));
    }
    for (const connections of (process.env.CONNS ?? "1,64").split(",").map(Number)) {
      for (const model of models) await load({ url, connections, seconds: 2, bodyFile: bodyFiles[model], key: KEY, core: 1 }); // warm-up
      const runs = { bench: [], "bench-responses": [] };
      for (let i = 0; i < RUNS; i++) {
        for (const model of models) {
          const before = await cpuMsOf(gateway.pid);
          const run = await load({ url, connections, seconds: SECONDS, bodyFile: bodyFiles[model], key: KEY, core: 1 });
          run.cpuUs = (((await cpuMsOf(gateway.pid)) - before) * 1000) / (run.rps * SECONDS);
          runs[model].push(run);
        }
      }
      const figure = (model, key) => median(runs[model].map((run) => run[key]));
      const line = (model) =>
        `p50 ${figure(model, "p50").toFixed(3)} ms, p99 ${figure(model, "p99").toFixed(3)} ms, ${figure(model, "rps").toFixed(0)} req/s, CPU ${figure(model, "cpuUs").toFixed(0)} µs/req`;
      console.log(
        `${mode} c=${connections}: openai-compatible ${line("bench")} | openai-responses ${line("bench-responses")} | added p50 ${(figure("bench-responses", "p50") - figure("bench", "p50")).toFixed(3)} ms, CPU ${(figure("bench-responses", "cpuUs") - figure("bench", "cpuUs")).toFixed(0)} µs/req`,
      );
    }
  }
} finally {
  await stop(gateway);
  await stop(upstream);
  rmSync(work, { recursive: true, force: true });
}

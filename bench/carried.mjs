// A same-wire route's cost: Claude Code's Messages request (its captured
// tool-result turn, ~87 KB) to an Anthropic route on the instant Anthropic
// upstream (anthropic-upstream.mjs), through this checkout's build and
// through another's (BEFORE, a checkout with its dist/ built), runs
// interleaved so both see the same host conditions. CPU per request from /proc.
//   BEFORE=/tmp/before npm run bench:carried
//   MODES=stream CONNS=1 RUNS=7 BEFORE=/tmp/before npm run bench:carried
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { anthropicRoutesYaml, KEY, startCarrierd } from "./gateway.mjs";
import { cpuMsOf, startPinned, stop } from "./processes.mjs";
import { load, median } from "./load.mjs";

const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const RUNS = Number(process.env.RUNS ?? 5);
const SECONDS = Number(process.env.SECONDS_PER_RUN ?? 3);
const work = mkdtempSync(join(tmpdir(), "carrierd-carried-bench-"));
const checkouts = { after: here(".."), ...(process.env.BEFORE ? { before: process.env.BEFORE } : {}) };

const upstream = await startPinned(1, [here("./anthropic-upstream.mjs")]);
const gateways = {};
try {
  for (const [name, checkout] of Object.entries(checkouts)) {
    gateways[name] = await startCarrierd(upstream.port, join(work, name), { checkout, routesOf: anthropicRoutesYaml });
  }
  const captured = JSON.parse(readFileSync(here("../test/fixtures/clients/claude-code-2.1.328-toolresult-req.json"), "utf8")).body;
  const rows = [];
  for (const mode of (process.env.MODES ?? "json,stream").split(",")) {
    const bodyFile = join(work, `${mode}.json`);
    writeFileSync(bodyFile, JSON.stringify({ ...captured, stream: mode === "stream" }));
    for (const connections of (process.env.CONNS ?? "1,16").split(",").map(Number)) {
      const url = (name) => `http://127.0.0.1:${gateways[name].port}/v1/messages`;
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

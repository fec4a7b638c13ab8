// Two builds of carrierd against each other (not the suite): one gateway per
// checkout, the same request, their load runs alternating (A B, B A, …) so a
// slow spell of the host falls on both. How each speed change was measured.
//   git worktree add /tmp/base HEAD~1 && ln -s "$PWD/node_modules" /tmp/base/
//   (cd /tmp/base && npx tsc -p .) && npx tsc -p .
//   node bench/compare.mjs /tmp/base . [json|stream] [rounds]
// CONNS (64), SECONDS_PER_RUN (3), and NODE_FLAGS_A / NODE_FLAGS_B (node
// flags for one side, e.g. "--max-semi-space-size=64") change the runs.
// WITH_RAW=1 adds the upstream itself and the raw proxy to every round, and
// prints each build's added p50 and CPU a request as ratios of the raw
// proxy's: the c=1 latency and fixed-cost targets (CONNS=1 WITH_RAW=1).
// WORKLOAD (a name of bench/agent-workloads.mjs: codex, opencode,
// claude-code) sends that agent's request body to its ingress path instead
// of the 20-turn chat history, with TURNS (0) turns of history; both sides
// get the same bytes (the client resends its reasoning itself), e.g.
//   WORKLOAD=opencode TURNS=0 CONNS=1 node bench/compare.mjs /tmp/base . json 6
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { WORKLOADS } from "./agent-workloads.mjs";
import { buildHistory, KEY, startCarrierd } from "./gateway.mjs";
import { cpuMsOf, startPinned, stop } from "./processes.mjs";
import { load, median } from "./load.mjs";

const [checkoutA, checkoutB, mode = "stream", roundsText = "6"] = process.argv.slice(2);
if (!checkoutA || !checkoutB) {
  console.error("usage: node bench/compare.mjs CHECKOUT_A CHECKOUT_B [json|stream] [rounds]");
  process.exit(2);
}
const ROUNDS = Number(roundsText);
const SECONDS = Number(process.env.SECONDS_PER_RUN ?? 3);
const CONNECTIONS = Number(process.env.CONNS ?? 64);
const work = mkdtempSync(join(tmpdir(), "carrierd-compare-"));
const flags = (text) => (text ? text.split(" ") : []);
const workload = process.env.WORKLOAD ? WORKLOADS[process.env.WORKLOAD] : undefined;
if (process.env.WORKLOAD && !workload) {
  console.error(`WORKLOAD is one of ${Object.keys(WORKLOADS).join(", ")}`);
  process.exit(2);
}
const path = workload?.path ?? "/v1/chat/completions";

const upstream = await startPinned(1, [fileURLToPath(new URL("./upstream.mjs", import.meta.url))]);
const raw = process.env.WITH_RAW
  ? await startPinned(0, [fileURLToPath(new URL("./raw-proxy.mjs", import.meta.url))], { UPSTREAM: `http://127.0.0.1:${upstream.port}` })
  : undefined;
const sides = [];
try {
  for (const [name, checkout, nodeFlags] of [
    ["A", checkoutA, process.env.NODE_FLAGS_A],
    ["B", checkoutB, process.env.NODE_FLAGS_B],
  ]) {
    const gateway = await startCarrierd(upstream.port, join(work, name), { checkout: resolve(checkout), nodeFlags: flags(nodeFlags) });
    const bodyFile = join(work, `${name}.json`);
    // each gateway replays its own stored turns: the chat history is built through it
    const body = workload
      ? workload.body(Number(process.env.TURNS ?? 0), { model: "bench", stream: mode === "stream" })
      : { model: "bench", stream: mode === "stream", messages: await buildHistory(gateway.port) };
    writeFileSync(bodyFile, JSON.stringify(body));
    sides.push({ name, gateway, bodyFile, url: `http://127.0.0.1:${gateway.port}${path}`, runs: [] });
  }
  if (raw) {
    // the same request as side A's, straight to the upstream and through the raw proxy
    sides.push({ name: "direct", bodyFile: sides[0].bodyFile, url: `http://127.0.0.1:${upstream.port}/v1/chat/completions`, runs: [] });
    sides.push({ name: "raw", gateway: raw, bodyFile: sides[0].bodyFile, url: `http://127.0.0.1:${raw.port}${path}`, runs: [] });
  }
  for (const side of sides) await load({ url: side.url, connections: CONNECTIONS, seconds: 2, bodyFile: side.bodyFile, key: KEY, core: 1 }); // warm-up
  for (let round = 0; round < ROUNDS; round++) {
    for (const side of round % 2 ? [...sides].reverse() : sides) {
      const before = side.gateway ? await cpuMsOf(side.gateway.pid) : 0;
      const run = await load({ url: side.url, connections: CONNECTIONS, seconds: SECONDS, bodyFile: side.bodyFile, key: KEY, core: 1 });
      run.cpuUs = side.gateway ? (((await cpuMsOf(side.gateway.pid)) - before) * 1000) / (run.rps * SECONDS) : 0;
      side.runs.push(run);
    }
  }
  for (const { name, runs } of sides) {
    console.log(
      `${name} ${process.env.WORKLOAD ? `${process.env.WORKLOAD} ${process.env.TURNS ?? 0} turns ` : ""}${mode} c=${CONNECTIONS}: p50 ${median(runs.map((r) => r.p50)).toFixed(3)} ms, p99 ${median(runs.map((r) => r.p99)).toFixed(3)} ms, ${median(runs.map((r) => r.rps)).toFixed(0)} req/s, CPU ${median(runs.map((r) => r.cpuUs)).toFixed(0)} µs a request  [${runs.map((r) => r.cpuUs.toFixed(0)).join(" ")}]; p99 per round [${runs.map((r) => r.p99.toFixed(1)).join(" ")}]`,
    );
  }
  const [a, b] = sides;
  const ratios = a.runs.map((run, i) => b.runs[i].rps / run.rps);
  console.log(`B/A req/s per round: ${ratios.map((ratio) => ratio.toFixed(2)).join(" ")} (median ${median(ratios).toFixed(2)})`);
  if (raw) {
    const [, , direct, proxy] = sides;
    const added = (side, i) => side.runs[i].p50 - direct.runs[i].p50;
    for (const side of [a, b]) {
      const cpuRatios = side.runs.map((run, i) => run.cpuUs / proxy.runs[i].cpuUs);
      console.log(
        `${side.name}: CPU a request ÷ raw's per round ${cpuRatios.map((ratio) => ratio.toFixed(2)).join(" ")} (median ${median(cpuRatios).toFixed(2)})`,
      );
      const perRound = side.runs.map((_, i) => added(side, i) / added(proxy, i));
      console.log(
        `${side.name}: added p50 ${median(side.runs.map((_, i) => added(side, i))).toFixed(3)} ms, raw's ${median(proxy.runs.map((_, i) => added(proxy, i))).toFixed(3)} ms; ratio per round ${perRound.map((ratio) => ratio.toFixed(2)).join(" ")} (median ${median(perRound).toFixed(2)})`,
      );
    }
  }
} finally {
  for (const side of sides) await stop(side.gateway);
  await stop(raw);
  await stop(upstream);
  rmSync(work, { recursive: true, force: true });
}

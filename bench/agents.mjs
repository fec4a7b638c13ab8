// Agent traffic (issue 37): carrierd against the raw proxy and the parse
// floor on request bodies built from real clients' requests — a Codex
// Responses request (to a chat route, and, as `codex-same-wire`, to an
// openai-responses route, where it is carried), an opencode chat request, a
// Claude Code Messages request (bench/agent-workloads.mjs) — at several
// sizes of history.
// Part of `npm run bench` (its last section); alone:
//   npm run bench:agents
//   WORKLOADS=opencode TURNS=0,100 CONNS=1 RUNS=3 SECONDS_PER_RUN=3 npm run bench:agents
//   CHECKOUT=/tmp/before npm run bench:agents  (another checkout's built dist/, same harness:
//                                                the before and after of a change)
//   AGENTS_CPU_PROF=/tmp/prof npm run bench:agents   (the gateway under node --cpu-prof;
//                                                    then node bench/profile-summary.mjs /tmp/prof/*.cpuprofile)
// The table is also written to bench/results/agents.md (alone) or
// bench/results/latest.md (in the suite). Per workload and size it prints: the parse floor (the raw proxy's CPU per
// request plus bench/parse-floor.mjs, timed alone on the gateways' core),
// CPU per request of carrierd and of the raw proxy (json), carrierd ÷
// floor, added p50/p99 at each concurrency (over wrk straight to the
// upstream), CPU per relayed chunk streaming at c=16, and the time to the
// first reasoning byte at c=16 on the paced upstream. Runs are interleaved
// (direct, raw, carrierd, direct, …) so a slow spell of the shared host
// falls on all targets alike; compare ratios within one run.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { WORKLOADS } from "./agent-workloads.mjs";
import { KEY, startCarrierd } from "./gateway.mjs";
import { cpuMsOf, startPinned, stop } from "./processes.mjs";
import { median, wrk } from "./wrk.mjs";
import { writeSummary } from "./summary.mjs";

const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const runFile = promisify(execFile);
// the chunks one streamed answer of the bench upstream is relayed in: role, 40 reasoning, 20 content, finish, usage, [DONE]
const CHUNKS_PER_STREAM = 64;

const list = (text, fallback) => (text ?? fallback).split(",").filter(Boolean);

/** Runs the agent section with its own upstream, carrierd and raw proxy; returns its rows (also printed as a table). */
export async function measureAgentTraffic({
  workloads = list(process.env.WORKLOADS, Object.keys(WORKLOADS).join(",")),
  sizes = list(process.env.TURNS, "0,10,100,300").map(Number),
  conns = list(process.env.CONNS, "1,16").map(Number),
  runs = Number(process.env.RUNS ?? 3),
  seconds = Number(process.env.SECONDS_PER_RUN ?? 3),
} = {}) {
  const work = mkdtempSync(join(tmpdir(), "carrierd-agents-"));
  const upstream = await startPinned(1, [here("./upstream.mjs")]);
  const profile = process.env.AGENTS_CPU_PROF;
  const checkout = process.env.CHECKOUT ? { checkout: resolve(process.env.CHECKOUT) } : {};
  const gateway = await startCarrierd(upstream.port, work, { ...checkout, nodeFlags: profile ? ["--cpu-prof", "--cpu-prof-dir", profile] : [] });
  const raw = await startPinned(0, [here("./raw-proxy.mjs")], { UPSTREAM: `http://127.0.0.1:${upstream.port}` });
  let sameWireRaw;
  const rows = [];
  try {
    for (const name of workloads) {
      const workload = WORKLOADS[name];
      for (const turns of sizes) {
        const files = {};
        for (const [mode, model, stream] of [
          ["json", "bench", false],
          ["stream", "bench", true],
          ["paced", "bench-paced", true],
        ]) {
          files[mode] = join(work, `${name}-${turns}-${mode}.json`);
          writeFileSync(files[mode], JSON.stringify(workload.body(turns, { model: workload.models?.[model] ?? model, stream })));
        }
        // a same-wire workload's raw proxy forwards to the upstream's endpoint of that wire
        const rawProxy = workload.upstreamPath
          ? (sameWireRaw ??= await startPinned(0, [here("./raw-proxy.mjs")], {
              UPSTREAM: `http://127.0.0.1:${upstream.port}`,
              UPSTREAM_PATH: workload.upstreamPath,
            }))
          : raw;
        const targets = [
          { name: "direct", url: `http://127.0.0.1:${upstream.port}${workload.upstreamPath ?? "/v1/chat/completions"}` },
          { name: "raw", url: `http://127.0.0.1:${rawProxy.port}${workload.path}`, pid: rawProxy.pid },
          { name: "carrierd", url: `http://127.0.0.1:${gateway.port}${workload.path}`, pid: gateway.pid },
        ];
        await answersOk(targets[2].url, files.json);
        const row = { workload: name, turns, kb: Math.round(statSync(files.json).size / 1024), latency: {} };
        for (const connections of conns) row.latency[connections] = await interleaved(targets, files.json, connections, runs, seconds);
        const streaming = await interleaved(targets.slice(1), files.stream, 16, runs, seconds);
        const floorPart = await parseFloor(name, files.json);
        const atOne = row.latency[conns[0]];
        row.floorUs = atOne.raw.cpuUs + floorPart;
        row.rawUs = atOne.raw.cpuUs;
        row.carrierdUs = atOne.carrierd.cpuUs;
        row.ofFloor = row.carrierdUs / row.floorUs;
        row.ofRaw = row.carrierdUs / row.rawUs;
        row.chunkUs = { raw: streaming.raw.cpuUs / CHUNKS_PER_STREAM, carrierd: streaming.carrierd.cpuUs / CHUNKS_PER_STREAM };
        row.firstReasoning = await firstReasoningOverhead(targets, files.paced, runs);
        rows.push(row);
        console.log(summary(row, conns));
      }
    }
  } finally {
    await stop(gateway);
    await stop(raw);
    if (sameWireRaw) await stop(sameWireRaw);
    await stop(upstream);
    rmSync(work, { recursive: true, force: true });
  }
  console.log(`\n${agentTable(rows)}`);
  return rows;
}

/** One request through carrierd before measuring: a workload it refuses would otherwise be timed as errors. */
async function answersOk(url, bodyFile) {
  const response = await fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: readFileSync(bodyFile),
  });
  if (response.status !== 200) throw new Error(`${url} answered ${response.status}: ${await response.text()}`);
  await response.arrayBuffer();
}

/** The targets' wrk runs at one concurrency, interleaved after a warm-up of each; per target the median p50, p99 and CPU per request. */
async function interleaved(targets, bodyFile, connections, runs, seconds) {
  const own = Object.fromEntries(targets.map((target) => [target.name, []]));
  for (const target of targets) await wrk({ url: target.url, connections, seconds: 1, bodyFile, key: KEY, core: 1 });
  for (let i = 0; i < runs; i++) {
    for (const target of targets) {
      const before = target.pid ? await cpuMsOf(target.pid) : 0;
      const run = await wrk({ url: target.url, connections, seconds, bodyFile, key: KEY, core: 1 });
      if (target.pid) run.cpuUs = (((await cpuMsOf(target.pid)) - before) * 1000) / (run.rps * seconds);
      own[target.name].push(run);
    }
  }
  const result = {};
  for (const target of targets) {
    const of = (field) => median(own[target.name].map((run) => run[field]));
    result[target.name] = { p50: of("p50"), p99: of("p99"), rps: of("rps"), cpuUs: target.pid ? of("cpuUs") : undefined };
  }
  if (result.direct) {
    for (const name of ["raw", "carrierd"]) {
      result[name].addedP50 = result[name].p50 - result.direct.p50;
      result[name].addedP99 = result[name].p99 - result.direct.p99;
    }
  }
  return result;
}

/** bench/parse-floor.mjs on the gateways' core (0), while nothing else runs there. */
async function parseFloor(name, bodyFile) {
  const { stdout } = await runFile("taskset", ["-c", "0", process.execPath, here("./parse-floor.mjs"), name, bodyFile]);
  return JSON.parse(stdout).us;
}

/** Time to the first reasoning byte at c=16 on the paced upstream (bench/first-byte.mjs), p50 over direct, per target. */
async function firstReasoningOverhead(targets, bodyFile, runs) {
  const own = Object.fromEntries(targets.map((target) => [target.name, []]));
  for (let i = 0; i < runs; i++) {
    for (const target of targets) {
      const args = ["-c", "1", process.execPath, here("./first-byte.mjs"), target.url, bodyFile, KEY, "160", "16", "64"];
      own[target.name].push(JSON.parse((await runFile("taskset", args)).stdout));
    }
  }
  const p50 = (name) => median(own[name].map((run) => run.p50));
  return { direct: p50("direct"), raw: p50("raw") - p50("direct"), carrierd: p50("carrierd") - p50("direct") };
}

const us = (value) => `${Math.round(value).toLocaleString("en")} µs`;
const ms = (value) => `${value.toFixed(3)} ms`;

function summary(row, conns) {
  const latency = conns.map((c) => `c=${c} added p50 raw ${ms(row.latency[c].raw.addedP50)}, carrierd ${ms(row.latency[c].carrierd.addedP50)}`).join("; ");
  return `${row.workload} ${row.turns} turns (${row.kb} KB): CPU/req floor ${us(row.floorUs)}, raw ${us(row.rawUs)}, carrierd ${us(row.carrierdUs)} (÷ floor ${row.ofFloor.toFixed(2)}, ÷ raw ${row.ofRaw.toFixed(2)}); ${latency}; first reasoning byte +${ms(row.firstReasoning.carrierd)} (raw +${ms(row.firstReasoning.raw)})`;
}

/** The rows as one markdown table (what bench/results/*.md hold): CPU per request against the floor and the raw proxy, latency, chunks, first byte. */
export function agentTable(rows) {
  const conns = Object.keys(rows[0]?.latency ?? {}).map(Number);
  const latencyHeads = conns.flatMap((c) => [`added p50/p99 c=${c} raw`, `carrierd`, `p50 ratio`]);
  const heads = ["workload", "turns", "body", "floor CPU/req", "raw CPU/req", "carrierd CPU/req", "carrierd ÷ floor", "carrierd ÷ raw", ...latencyHeads];
  heads.push("CPU/chunk raw", "carrierd", "ratio", "first reasoning byte +raw", "+carrierd");
  const lines = [`| ${heads.join(" | ")} |`, `|${heads.map(() => "---").join("|")}|`];
  for (const row of rows) {
    const cells = [row.workload, row.turns, `${row.kb} KB`, us(row.floorUs), us(row.rawUs), us(row.carrierdUs), row.ofFloor.toFixed(2), row.ofRaw.toFixed(2)];
    for (const c of conns) {
      const { raw, carrierd } = row.latency[c];
      cells.push(
        `${ms(raw.addedP50)} / ${ms(raw.addedP99)}`,
        `${ms(carrierd.addedP50)} / ${ms(carrierd.addedP99)}`,
        (carrierd.addedP50 / raw.addedP50).toFixed(2),
      );
    }
    cells.push(`${row.chunkUs.raw.toFixed(1)} µs`, `${row.chunkUs.carrierd.toFixed(1)} µs`, (row.chunkUs.carrierd / row.chunkUs.raw).toFixed(2));
    cells.push(ms(row.firstReasoning.raw), ms(row.firstReasoning.carrierd));
    lines.push(`| ${cells.join(" | ")} |`);
  }
  return lines.join("\n");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const rows = await measureAgentTraffic();
  writeSummary("agents", "npm run bench:agents", [agentTable(rows)]);
}

// carrierd's benchmark suite (issue 9): what carrierd costs on top of the
// network, against a raw pass-through proxy in the same run. Not part of
// `npm test`; run with `npm run bench`. Prints its tables and writes them to
// bench/results/latest.md, its figures to bench/results/latest.json.
// BENCH_PREFILL_TURNS=1000000 runs it on stores that already hold that many
// turns (bench/prefill.mjs).
//
// Cores: every server under test (raw proxy, carrierd) runs on core 0; the
// upstream emulator and the load generator share core 1 — the same for every target.
import { execFile, execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Pool } from "undici";
import { buildHistory, KEY, routesYaml, startCarrierd } from "./gateway.mjs";
import { startPrefilledCarrierd } from "./prefill.mjs";
import { cpuMsOf, memoryOf, startPinned, stop } from "./processes.mjs";
import { load, median } from "./load.mjs";
import { redisForBench, streamEntries } from "./redis-events.mjs";
import { backendCpuBetween, postgresForBench } from "./postgres-store.mjs";
import { agentTable, measureAgentTraffic } from "./agents.mjs";
import { writeSummary } from "./summary.mjs";

const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const runFile = promisify(execFile);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
// the SQLite and PostgreSQL gateways' stores pre-filled with this many stored turns (bench/prefill.mjs)
const PREFILL = { turns: Number(process.env.BENCH_PREFILL_TURNS ?? 0), analyze: process.env.PREFILL_ANALYZE === "1" };
const work = mkdtempSync(join(tmpdir(), "carrierd-bench-"));

/**
 * Every figure's runs interleave the targets (direct, raw, carrierd, direct,
 * raw, …) after a warm-up of each, so that a slow spell of the host falls
 * on all of them alike rather than on one target's runs.
 */
async function latencyRows(targets, bodies) {
  const rows = [];
  for (const mode of ["json", "stream"]) {
    for (const connections of [1, 16, 64]) {
      const row = { mode, connections };
      const runs = Object.fromEntries(targets.map((target) => [target.name, []]));
      // a gateway on another store replays the history it stored itself: its own request bodies
      const bodyOf = (target) => target.bodies?.[mode] ?? bodies[mode];
      for (const target of targets) await load({ url: target.url, connections, seconds: 1, bodyFile: bodyOf(target), key: KEY, core: 1 });
      for (let i = 0; i < RUNS; i++) {
        for (const target of targets) {
          const cpuBefore = target.pid ? await cpuMsOf(target.pid) : 0;
          const dbBefore = target.store ? await target.store.backendCpu() : undefined;
          const run = await load({ url: target.url, connections, seconds: SECONDS, bodyFile: bodyOf(target), key: KEY, core: 1 });
          // CPU per request is steadier than req/s on a shared VM: it does not move with the time slices the host grants
          if (target.pid) run.cpuUs = (((await cpuMsOf(target.pid)) - cpuBefore) * 1000) / (run.rps * SECONDS);
          if (dbBefore) run.dbCpuUs = (backendCpuBetween(dbBefore, await target.store.backendCpu()) * 1000) / (run.rps * SECONDS);
          runs[target.name].push(run);
        }
      }
      for (const target of targets) {
        const own = runs[target.name];
        row[target.name] = {
          p50: median(own.map((r) => r.p50)),
          p99: median(own.map((r) => r.p99)),
          rps: median(own.map((r) => r.rps)),
          cpuUs: target.pid ? median(own.map((r) => r.cpuUs)) : undefined,
        };
        if (target.store) row[target.name].dbCpuUs = median(own.map((r) => r.dbCpuUs));
      }
      for (const name of ["raw", "carrierd", "carrierdRedis", "carrierdPg"].filter((name) => row[name])) {
        row[name].addedP50 = row[name].p50 - row.direct.p50;
        row[name].addedP99 = row[name].p99 - row.direct.p99;
      }
      row.ratioP50 = row.carrierd.addedP50 / row.raw.addedP50;
      row.ratioRps = row.carrierd.rps / row.raw.rps;
      row.ratioCpu = row.carrierd.cpuUs / row.raw.cpuUs;
      rows.push(row);
      if (row.carrierdPg) {
        const pg = row.carrierdPg;
        console.log(
          `${mode.padEnd(6)} c=${String(connections).padEnd(3)} PostgreSQL store: added p50 ${pg.addedP50.toFixed(3)} ms (SQLite ${row.carrierd.addedP50.toFixed(3)} ms, Δ ${(pg.addedP50 - row.carrierd.addedP50).toFixed(3)}), p99 ${pg.addedP99.toFixed(3)} ms (SQLite ${row.carrierd.addedP99.toFixed(3)}), rps ${pg.rps.toFixed(0)} (SQLite ${row.carrierd.rps.toFixed(0)}), CPU per request gateway ${pg.cpuUs.toFixed(0)} µs + database ${pg.dbCpuUs.toFixed(0)} µs`,
        );
      }
      if (row.carrierdRedis)
        console.log(
          `${mode.padEnd(6)} c=${String(connections).padEnd(3)} events through Redis: added p50 ${row.carrierdRedis.addedP50.toFixed(3)} ms (local events ${row.carrierd.addedP50.toFixed(3)} ms), p99 ${row.carrierdRedis.addedP99.toFixed(3)} ms, rps ${row.carrierdRedis.rps.toFixed(0)}, CPU per request ${row.carrierdRedis.cpuUs.toFixed(0)} µs`,
        );
      console.log(
        `${mode.padEnd(6)} c=${String(connections).padEnd(3)} added p50 raw ${row.raw.addedP50.toFixed(3)} ms, carrierd ${row.carrierd.addedP50.toFixed(3)} ms (×${row.ratioP50.toFixed(2)}); p99 raw ${row.raw.addedP99.toFixed(3)}, carrierd ${row.carrierd.addedP99.toFixed(3)}; rps raw ${row.raw.rps.toFixed(0)}, carrierd ${row.carrierd.rps.toFixed(0)} (×${row.ratioRps.toFixed(2)}); CPU per request raw ${row.raw.cpuUs.toFixed(0)} µs, carrierd ${row.carrierd.cpuUs.toFixed(0)} µs`,
      );
    }
  }
  return rows;
}

/**
 * Time from sending a streaming request to its first reasoning byte, at
 * concurrency 16: bench/first-byte.mjs, pinned to the load generator's core,
 * after a warm-up. RUNS runs per target, interleaved like the
 * latency runs; per target the median of their p50s and p99s. Measured
 * twice: against the instant upstream, where 16 connections keep the
 * gateway saturated and the figure is its queue (throughput, by Little's
 * law), and against the paced one, where 16 streams are open the way 16
 * users' are and the figure is what the gateway adds to a first token.
 */
async function firstReasoningBytes(targets, bodyFile, key, total = 320, concurrency = 16) {
  const runs = Object.fromEntries(targets.map((target) => [target.name, []]));
  for (let i = 0; i < RUNS; i++) {
    for (const target of targets) {
      const { stdout } = await runFile("taskset", [
        "-c",
        "1",
        process.execPath,
        here("./first-byte.mjs"),
        target.url,
        bodyFile,
        key,
        String(total),
        String(concurrency),
      ]);
      runs[target.name].push(JSON.parse(stdout));
    }
  }
  return Object.fromEntries(
    Object.entries(runs).map(([name, own]) => [name, { p50: median(own.map((run) => run.p50)), p99: median(own.map((run) => run.p99)) }]),
  );
}

/** Peak RSS of carrierd while 1,000 streams are open at once. */
async function rssWithOpenStreams(count = 1000) {
  const upstream = await startPinned(1, [here("./upstream.mjs")], { HOLD_MS: "4000" });
  const gateway = await startCarrierd(upstream.port, join(work, "rss"));
  const before = await memoryOf(gateway.pid);
  const pool = new Pool(`http://127.0.0.1:${gateway.port}`, { connections: count, pipelining: 0 });
  const body = JSON.stringify({ model: "bench", stream: true, messages: [{ role: "user", content: "hold" }] });
  // the upstream's first reasoning delta (" think0.0") leaves at once, the rest after HOLD_MS
  let open = 0;
  let peakWhileOpen = 0;
  const requests = Array.from({ length: count }, async () => {
    const response = await pool.request({
      path: "/v1/chat/completions",
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${KEY}` },
      body,
    });
    let counted = false;
    for await (const chunk of response.body) {
      if (!counted && chunk.includes("think")) {
        counted = true;
        if (++open === count) peakWhileOpen = (await memoryOf(gateway.pid)).rssMiB;
      }
    }
  });
  await Promise.all(requests);
  const after = await memoryOf(gateway.pid);
  await pool.close();
  await stop(gateway);
  await stop(upstream);
  return { streams: count, allOpenAtOnce: open === count, idleRssMiB: before.rssMiB, rssWithAllOpenMiB: peakWhileOpen, peakRssMiB: after.peakMiB };
}

/** File write → the new model listed by /v1/models. */
async function hotReload(gateway, upstreamPort, times = 5) {
  const samples = [];
  for (let i = 0; i < times; i++) {
    const name = `reload-${i}`;
    const started = performance.now();
    writeFileSync(gateway.routes, routesYaml(upstreamPort, `\n  - { name: ${name}, provider: bench, model: bench-reasoner }`));
    for (;;) {
      const response = await fetch(`http://127.0.0.1:${gateway.port}/v1/models`, { headers: { authorization: `Bearer ${KEY}` } });
      const text = await response.text();
      if (text.includes(name)) break;
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    samples.push(performance.now() - started);
  }
  return { p50: median(samples), max: Math.max(...samples) };
}

/**
 * Two gateways on one PostgreSQL serving one load, against one: the same
 * stored history, the load generator at `connections` against the one instance, then
 * two load generators at half of it each, one per instance, at the same time (what a load
 * balancer in front of two instances sees). One instance is on core 0; the
 * second takes core 1, beside the load generator and the upstream emulator, so the figure
 * is how throughput scales on this machine, not on two free machines.
 * Runs interleave; per setup the median of the summed req/s and of the
 * database backends' CPU per request.
 */
async function scaleOut(upstreamPort, store, bodyFile, connections = 16) {
  const one = await startCarrierd(upstreamPort, join(work, "pg-a"), { env: { CARRIERD_STORE: store.url }, core: 0 });
  const two = await startCarrierd(upstreamPort, join(work, "pg-b"), { env: { CARRIERD_STORE: store.url }, core: 1 });
  const url = (gateway) => `http://127.0.0.1:${gateway.port}/v1/chat/completions`;
  const setups = {
    oneInstance: () => [load({ url: url(one), connections, seconds: SECONDS, bodyFile, key: KEY, core: 1 })],
    twoInstances: () => [one, two].map((gateway) => load({ url: url(gateway), connections: connections / 2, seconds: SECONDS, bodyFile, key: KEY, core: 1 })),
  };
  try {
    for (const start of Object.values(setups)) await Promise.all(start());
    const runs = { oneInstance: [], twoInstances: [] };
    for (let i = 0; i < RUNS; i++) {
      for (const [name, start] of Object.entries(setups)) {
        const dbBefore = await store.backendCpu();
        const rps = (await Promise.all(start())).reduce((sum, run) => sum + run.rps, 0);
        runs[name].push({ rps, dbCpuUs: (backendCpuBetween(dbBefore, await store.backendCpu()) * 1000) / (rps * SECONDS) });
      }
    }
    const result = { connections };
    for (const [name, own] of Object.entries(runs)) result[name] = { rps: median(own.map((r) => r.rps)), dbCpuUs: median(own.map((r) => r.dbCpuUs)) };
    result.scaling = result.twoInstances.rps / result.oneInstance.rps;
    return result;
  } finally {
    await stop(one).catch(() => undefined);
    await stop(two).catch(() => undefined);
  }
}

/** The markdown sections of bench/results/latest.md, printed at the end too; the agent section adds its own. */
const summary = [];

/** The chat history's table: carrierd against the raw proxy, added latency over the direct upstream, throughput and CPU per request. */
function latencyTable(latency) {
  const lines = [
    "## 20-turn chat history, must_echo route",
    "",
    "| mode | c | raw added p50 | carrierd added p50 | ratio | raw added p99 | carrierd added p99 | raw req/s | carrierd req/s | req/s ratio | raw CPU/req | carrierd CPU/req |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|",
  ];
  for (const row of latency) {
    lines.push(
      `| ${row.mode} | ${row.connections} | ${row.raw.addedP50.toFixed(3)} ms | ${row.carrierd.addedP50.toFixed(3)} ms | ${row.ratioP50.toFixed(2)} | ${row.raw.addedP99.toFixed(3)} ms | ${row.carrierd.addedP99.toFixed(3)} ms | ${row.raw.rps.toFixed(0)} | ${row.carrierd.rps.toFixed(0)} | ${row.ratioRps.toFixed(2)} | ${row.raw.cpuUs.toFixed(0)} µs | ${row.carrierd.cpuUs.toFixed(0)} µs |`,
    );
  }
  return lines.join("\n");
}

/** The same rows for the gateway on PostgreSQL, beside SQLite's, with the database backends' CPU per request. */
function postgresTable(latency) {
  const lines = [
    "## PostgreSQL store against SQLite",
    "",
    "| mode | c | SQLite added p50 | PostgreSQL added p50 | Δ p50 | SQLite added p99 | PostgreSQL added p99 | SQLite req/s | PostgreSQL req/s | PostgreSQL gateway CPU/req | database CPU/req |",
    "|---|---|---|---|---|---|---|---|---|---|---|",
  ];
  for (const row of latency) {
    const [lite, pg] = [row.carrierd, row.carrierdPg];
    lines.push(
      `| ${row.mode} | ${row.connections} | ${lite.addedP50.toFixed(3)} ms | ${pg.addedP50.toFixed(3)} ms | ${(pg.addedP50 - lite.addedP50).toFixed(3)} ms | ${lite.addedP99.toFixed(3)} ms | ${pg.addedP99.toFixed(3)} ms | ${lite.rps.toFixed(0)} | ${pg.rps.toFixed(0)} | ${pg.cpuUs.toFixed(0)} µs | ${pg.dbCpuUs.toFixed(0)} µs |`,
    );
  }
  return lines.join("\n");
}

/** First reasoning byte, hot reload, open streams' memory and two instances on one PostgreSQL, one row each. */
function otherFigures({ firstReasoningByte, firstReasoningBytePaced, hotReload, rss, scaleOut }) {
  const ms = (value) => `${value.toFixed(2)} ms`;
  const rows = [
    [
      "first reasoning byte, p50 overhead at c=16, paced upstream",
      `raw +${ms(firstReasoningBytePaced.overhead.raw)}, carrierd +${ms(firstReasoningBytePaced.overhead.carrierd)}; p99 direct ${ms(firstReasoningBytePaced.direct.p99)}, raw ${ms(firstReasoningBytePaced.raw.p99)}, carrierd ${ms(firstReasoningBytePaced.carrierd.p99)}`,
    ],
    [
      "first reasoning byte, p50 overhead at c=16, instant upstream",
      `raw +${ms(firstReasoningByte.overhead.raw)}, carrierd +${ms(firstReasoningByte.overhead.carrierd)}`,
    ],
    ["hot reload, write → new table in force", `p50 ${ms(hotReload.p50)}, max ${ms(hotReload.max)}`],
    [
      `${rss.streams.toLocaleString("en")} concurrent open streams`,
      `RSS ${rss.idleRssMiB.toFixed(0)} MiB idle, ${rss.rssWithAllOpenMiB.toFixed(0)} MiB with all open, peak ${rss.peakRssMiB.toFixed(0)} MiB`,
    ],
  ];
  if (scaleOut)
    rows.push([
      `two instances on one PostgreSQL, json, ${scaleOut.connections} connections in all`,
      `one ${scaleOut.oneInstance.rps.toFixed(0)} req/s (database ${scaleOut.oneInstance.dbCpuUs.toFixed(0)} µs/req), two ${scaleOut.twoInstances.rps.toFixed(0)} req/s (×${scaleOut.scaling.toFixed(2)}, database ${scaleOut.twoInstances.dbCpuUs.toFixed(0)} µs/req)`,
    ]);
  return ["## Other figures", "", "| measure | result |", "|---|---|", ...rows.map(([measure, result]) => `| ${measure} | ${result} |`)].join("\n");
}

/** taskset must be on PATH (the load generator is a devDependency); say how to get it rather than fail half-way. */
async function checkTools() {
  for (const [tool, pkg] of [["taskset", "util-linux"]]) {
    try {
      execFileSync("sh", ["-c", `command -v ${tool}`], { stdio: "ignore" });
    } catch {
      console.error(`npm run bench needs ${tool} (Debian: apt-get install ${pkg})`);
      process.exit(1);
    }
  }
}

async function main() {
  await checkTools();
  const upstream = await startPinned(1, [here("./upstream.mjs")]);
  const raw = await startPinned(0, [here("./raw-proxy.mjs")], { UPSTREAM: `http://127.0.0.1:${upstream.port}` });
  const gateway = await startPrefilledCarrierd(upstream.port, join(work, "main"), PREFILL);
  // the Redis event bus (issue 25), when a Redis is there: the same build with every event written to a stream
  const redis = redisForBench();
  const redisStream = `carrierd-bench:${process.pid}:events`;
  if (redis.problem) console.log(`no Redis event bus figures: ${redis.problem}`);
  const redisGateway = redis.problem
    ? undefined
    : await startCarrierd(upstream.port, join(work, "redis"), { env: { CARRIERD_EVENTS: redis.url, CARRIERD_EVENTS_STREAM: redisStream } });
  // the PostgreSQL store (issue 25), when a server is there: the same build with its state in a database of its own
  const store = await postgresForBench();
  if (store.problem) console.log(`no PostgreSQL store figures: ${store.problem}`);
  const pgGateway = store.problem
    ? undefined
    : await startPrefilledCarrierd(upstream.port, join(work, "pg"), { ...PREFILL, env: { CARRIERD_STORE: store.url } });
  try {
    const history = await buildHistory(gateway.port, 20);
    const bodies = {};
    for (const mode of ["json", "stream"]) {
      bodies[mode] = join(work, `${mode}.json`);
      writeFileSync(bodies[mode], JSON.stringify({ model: "bench", stream: mode === "stream", messages: history }));
    }
    // the PostgreSQL gateway stores the same conversation for itself, so its requests replay from its own store
    const pgBodies = {};
    if (pgGateway) {
      const pgHistory = await buildHistory(pgGateway.port, 20);
      for (const mode of ["json", "stream"]) {
        pgBodies[mode] = join(work, `pg.${mode}.json`);
        writeFileSync(pgBodies[mode], JSON.stringify({ model: "bench", stream: mode === "stream", messages: pgHistory }));
      }
    }
    bodies.paced = join(work, "paced.json");
    writeFileSync(bodies.paced, JSON.stringify({ model: "bench-paced", stream: true, messages: history }));
    const targets = [
      { name: "direct", url: `http://127.0.0.1:${upstream.port}/v1/chat/completions` },
      { name: "raw", url: `http://127.0.0.1:${raw.port}/v1/chat/completions`, pid: raw.pid },
      { name: "carrierd", url: `http://127.0.0.1:${gateway.port}/v1/chat/completions`, pid: gateway.pid },
      ...(redisGateway ? [{ name: "carrierdRedis", url: `http://127.0.0.1:${redisGateway.port}/v1/chat/completions`, pid: redisGateway.pid }] : []),
      ...(pgGateway
        ? [{ name: "carrierdPg", url: `http://127.0.0.1:${pgGateway.port}/v1/chat/completions`, pid: pgGateway.pid, bodies: pgBodies, store }]
        : []),
    ];
    console.log(
      `carrierd benchmark: ${RUNS} runs × ${SECONDS}s per figure, medians; history ${history.length} messages (20 assistant turns replayed on a must_echo route)`,
    );
    const latency = await latencyRows(targets, bodies);
    await stop(redisGateway);
    await stop(pgGateway);
    // the other figures are of the default build; the Redis and PostgreSQL ones are measured for latency and throughput only
    targets.splice(3);
    let scale;
    if (pgGateway) {
      scale = await scaleOut(upstream.port, store, pgBodies.json);
      console.log(
        `two instances on one PostgreSQL, json c=${scale.connections}: one instance ${scale.oneInstance.rps.toFixed(0)} req/s (database CPU ${scale.oneInstance.dbCpuUs.toFixed(0)} µs per request), two ${scale.twoInstances.rps.toFixed(0)} req/s (database CPU ${scale.twoInstances.dbCpuUs.toFixed(0)} µs per request), ×${scale.scaling.toFixed(2)}`,
      );
    }
    const ttfr = await firstReasoningBytes(targets, bodies.stream, KEY);
    const ttfrOverhead = { raw: ttfr.raw.p50 - ttfr.direct.p50, carrierd: ttfr.carrierd.p50 - ttfr.direct.p50 };
    console.log(
      `first reasoning byte at c=16, instant upstream (saturated), p50 overhead: raw ${ttfrOverhead.raw.toFixed(3)} ms, carrierd ${ttfrOverhead.carrierd.toFixed(3)} ms`,
    );
    const paced = await firstReasoningBytes(targets, bodies.paced, KEY);
    const pacedOverhead = { raw: paced.raw.p50 - paced.direct.p50, carrierd: paced.carrierd.p50 - paced.direct.p50 };
    console.log(
      `first reasoning byte at c=16, paced upstream (16 open streams), p50 overhead: raw ${pacedOverhead.raw.toFixed(3)} ms, carrierd ${pacedOverhead.carrierd.toFixed(3)} ms; p99 direct ${paced.direct.p99.toFixed(3)}, raw ${paced.raw.p99.toFixed(3)}, carrierd ${paced.carrierd.p99.toFixed(3)} ms`,
    );
    const reload = await hotReload(gateway, upstream.port);
    console.log(`hot reload (write → in force): p50 ${reload.p50.toFixed(1)} ms, max ${reload.max.toFixed(1)} ms`);
    await stop(gateway);
    await stop(raw);
    await stop(upstream);
    const rss = await rssWithOpenStreams();
    console.log(
      `1,000 open streams: RSS idle ${rss.idleRssMiB.toFixed(0)} MiB, with all open ${rss.rssWithAllOpenMiB.toFixed(0)} MiB, peak ${rss.peakRssMiB.toFixed(0)} MiB`,
    );
    const results = {
      date: new Date().toISOString(),
      node: process.version,
      seconds: SECONDS,
      runs: RUNS,
      latency,
      firstReasoningByte: { ...ttfr, overhead: ttfrOverhead },
      firstReasoningBytePaced: { ...paced, overhead: pacedOverhead },
      hotReload: reload,
      rss,
      scaleOut: scale,
    };
    mkdirSync(here("./results/"), { recursive: true });
    writeFileSync(here("./results/latest.json"), `${JSON.stringify(results, null, 2)}\n`);
    summary.push(latencyTable(latency));
    if (latency[0].carrierdPg) summary.push(postgresTable(latency));
    summary.push(otherFigures(results));
    for (const section of summary) console.log(`\n${section}`);
    writeSummary("latest", "npm run bench", summary);
  } finally {
    await stop(redisGateway).catch(() => undefined);
    await stop(pgGateway).catch(() => undefined);
    if (store.drop) await store.drop().catch(() => undefined);
    if (redisGateway) {
      try {
        streamEntries(redis, redisStream, true);
      } catch {
        // nothing was written
      }
    }
    await stop(gateway).catch(() => undefined);
    await stop(raw).catch(() => undefined);
    await stop(upstream).catch(() => undefined);
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
// agent traffic (bench/agents.mjs): real clients' request shapes at 0–300 turns of history; BENCH_AGENTS=0 leaves it out
if (process.env.BENCH_AGENTS !== "0") {
  console.log("\nagent traffic (bench/agents.mjs):");
  const agents = await measureAgentTraffic({ runs: RUNS, seconds: SECONDS });
  const path = here("./results/latest.json");
  writeFileSync(path, `${JSON.stringify({ ...JSON.parse(readFileSync(path, "utf8")), agents }, null, 2)}\n`);
  writeSummary("latest", "npm run bench", [...summary, `## Agent traffic\n\n${agentTable(agents)}`]);
}
// the Responses API plugin against chat completions on the same 20-turn history (bench/responses.mjs); BENCH_RESPONSES=0 leaves it out
if (process.env.BENCH_RESPONSES !== "0") {
  console.log("\nopenai-responses against openai-compatible (bench/responses.mjs):");
  execFileSync(process.execPath, [here("./responses.mjs")], {
    stdio: "inherit",
    env: { ...process.env, RUNS: String(RUNS), SECONDS_PER_RUN: String(SECONDS) },
  });
}

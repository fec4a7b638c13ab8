// The Redis event bus against local events (issue 25): the same carrierd
// build twice, one with CARRIERD_EVENTS=local, one writing every event to a
// Redis Stream, their load runs interleaved, no subscriber connected (with
// local events and nobody listening per-token events are not even built;
// with Redis every event is written, whoever listens). Also used by run.mjs.
//   npm run build && node bench/redis-events.mjs
//   CONNS=1,16,64 MODES=stream,json RUNS=3 SECONDS_PER_RUN=3 REDIS_URL=redis://127.0.0.1:6379 node bench/redis-events.mjs
//   SUBSCRIBER=1 node bench/redis-events.mjs    # with one dashboard-like subscriber on each gateway
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import WebSocket from "ws";
import { buildHistory, KEY, startCarrierd } from "./gateway.mjs";
import { cpuMsOf, startPinned, stop } from "./processes.mjs";
import { load, median } from "./load.mjs";

const here = (path) => fileURLToPath(new URL(path, import.meta.url));

/** The Redis the bench writes to, its server's pid (for its CPU per request, when it runs on this machine), or why it cannot. */
export function redisForBench(url = process.env.REDIS_URL ?? "redis://127.0.0.1:6379") {
  const { hostname, port } = new URL(url);
  try {
    const info = execFileSync("redis-cli", ["-h", hostname, "-p", port || "6379", "info", "server"], { encoding: "utf8" });
    const pid = Number(/process_id:(\d+)/.exec(info)?.[1]);
    return { url, pid: Number.isInteger(pid) ? pid : undefined, host: hostname, port: port || "6379" };
  } catch (error) {
    return { url, problem: `no Redis at ${url} (${error.message.split("\n")[0]})` };
  }
}

/** Entries written to `stream` so far, and deletes it. */
export function streamEntries(redis, stream, remove = false) {
  const cli = (...args) => execFileSync("redis-cli", ["-h", redis.host, "-p", redis.port, ...args], { encoding: "utf8" }).trim();
  const info = cli("xinfo", "stream", stream).split("\n");
  const added = Number(info[info.indexOf("entries-added") + 1] ?? 0);
  if (remove) cli("del", stream);
  return added;
}

async function main() {
  const redis = redisForBench();
  if (redis.problem) {
    console.error(`bench/redis-events.mjs: ${redis.problem}; start one with redis-server --daemonize yes --port 6379 --save '' --appendonly no`);
    process.exit(1);
  }
  const RUNS = Number(process.env.RUNS ?? 3);
  const SECONDS = Number(process.env.SECONDS_PER_RUN ?? 3);
  const work = mkdtempSync(join(tmpdir(), "carrierd-redis-bench-"));
  const stream = `carrierd-bench:${process.pid}:events`;
  const upstream = await startPinned(1, [here("./upstream.mjs")]);
  const local = await startCarrierd(upstream.port, join(work, "local"));
  const shared = await startCarrierd(upstream.port, join(work, "redis"), { env: { CARRIERD_EVENTS: redis.url, CARRIERD_EVENTS_STREAM: stream } });
  const targets = [
    { name: "direct", url: `http://127.0.0.1:${upstream.port}/v1/chat/completions` },
    { name: "local", url: `http://127.0.0.1:${local.port}/v1/chat/completions`, pid: local.pid },
    { name: "redis", url: `http://127.0.0.1:${shared.port}/v1/chat/completions`, pid: shared.pid },
  ];
  const subscribers = [];
  try {
    if (process.env.SUBSCRIBER === "1") {
      // one subscriber of everything per gateway: then local events are built too, and the hub of each serves them
      for (const gateway of [local, shared]) {
        const ws = new WebSocket(`ws://127.0.0.1:${gateway.port}/v1/events`, { headers: { authorization: `Bearer ${KEY}` } });
        await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
        ws.on("message", () => undefined);
        subscribers.push(ws);
      }
    }
    const messages = await buildHistory(local.port, Number(process.env.TURNS ?? 20));
    console.log(
      `Redis event bus vs local events: ${RUNS} runs × ${SECONDS}s, medians; carrierd on core 0 (both), upstream and load generator on core 1, Redis at ${redis.url}; ${subscribers.length ? "one subscriber on each gateway" : "no subscriber"}`,
    );
    for (const mode of (process.env.MODES ?? "stream,json").split(",")) {
      const bodyFile = join(work, `${mode}.json`);
      writeFileSync(bodyFile, JSON.stringify({ model: "bench", stream: mode === "stream", messages }));
      for (const connections of (process.env.CONNS ?? "1,64").split(",").map(Number)) {
        for (const target of targets) await load({ url: target.url, connections, seconds: 1, bodyFile, key: KEY, core: 1 });
        const runs = Object.fromEntries(targets.map((target) => [target.name, []]));
        let redisCpuUs = [];
        for (let i = 0; i < RUNS; i++) {
          for (const target of targets) {
            const before = target.pid ? await cpuMsOf(target.pid) : 0;
            const redisBefore = target.name === "redis" && redis.pid ? await cpuMsOf(redis.pid) : 0;
            const entriesBefore = target.name === "redis" ? streamEntries(redis, stream) : 0;
            const run = await load({ url: target.url, connections, seconds: SECONDS, bodyFile, key: KEY, core: 1 });
            if (target.pid) run.cpuUs = (((await cpuMsOf(target.pid)) - before) * 1000) / (run.rps * SECONDS);
            if (target.name === "redis") {
              run.eventsPerRequest = (streamEntries(redis, stream) - entriesBefore) / (run.rps * SECONDS);
              if (redis.pid) redisCpuUs.push((((await cpuMsOf(redis.pid)) - redisBefore) * 1000) / (run.rps * SECONDS));
            }
            runs[target.name].push(run);
          }
        }
        const figure = (name) => ({
          p50: median(runs[name].map((r) => r.p50)),
          p99: median(runs[name].map((r) => r.p99)),
          rps: median(runs[name].map((r) => r.rps)),
          cpuUs: name === "direct" ? undefined : median(runs[name].map((r) => r.cpuUs)),
        });
        const direct = figure("direct");
        const line = (name) => {
          const own = figure(name);
          return `${name}: added p50 ${(own.p50 - direct.p50).toFixed(3)} ms, p99 ${(own.p99 - direct.p99).toFixed(3)} ms, ${own.rps.toFixed(0)} req/s, CPU ${own.cpuUs.toFixed(0)} µs/req`;
        };
        const events = median(runs.redis.map((r) => r.eventsPerRequest));
        console.log(
          `${mode.padEnd(6)} c=${String(connections).padEnd(3)} ${line("local")} | ${line("redis")} | ${events.toFixed(1)} stream entries written per request (each a flush of events)${redisCpuUs.length ? `, Redis CPU ${median(redisCpuUs).toFixed(0)} µs/req` : ""}`,
        );
      }
    }
    const metrics = await (await fetch(`http://127.0.0.1:${shared.port}/metrics`, { headers: { authorization: `Bearer ${KEY}` } })).text();
    const dropped = metrics.split("\n").filter((row) => row.startsWith("carrierd_events_dropped_total{"));
    console.log(`events dropped by the Redis instance: ${dropped.map((row) => row.replace("carrierd_events_dropped_total", "")).join(", ") || "none"}`);
  } finally {
    for (const ws of subscribers) ws.terminate();
    await stop(local);
    await stop(shared);
    await stop(upstream);
    try {
      streamEntries(redis, stream, true);
    } catch {
      // nothing was written
    }
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();

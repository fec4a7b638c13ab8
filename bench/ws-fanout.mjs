// WebSocket fan-out benchmark (issue 7): SUBSCRIBERS clients on loopback
// watch the event stream while paced demo requests stream through the
// gateway. Prints event delivery latency (publish `ts` → client receipt)
// p50/p90/p99, and streaming request durations without and with the
// subscribers attached. Not part of `npm test`.
//
//   npm run build && node bench/ws-fanout.mjs
//   SUBSCRIBERS=1000 CONCURRENCY=2 SECONDS=10 DELAY_MS=25 WORKERS=2 node bench/ws-fanout.mjs
//
// The gateway runs in its own process (on core 0 when `taskset` exists);
// the subscribers live in WORKERS threads of this process and the request
// driver on its main thread, so the latency includes the subscribers' own
// time to read their sockets.
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import WebSocket from "ws";

const SUBSCRIBERS = Number(process.env.SUBSCRIBERS ?? 1000);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 2);
const SECONDS = Number(process.env.SECONDS ?? 10);
const DELAY_MS = Number(process.env.DELAY_MS ?? 25);
const WORKERS = Number(process.env.WORKERS ?? 2);
const KEY = "bench-key-0123456789";
const root = fileURLToPath(new URL("..", import.meta.url));
const now = () => performance.timeOrigin + performance.now();

if (!isMainThread) {
  await subscriberWorker(workerData);
  process.exit(0);
}

if (!existsSync(join(root, "dist", "src", "cli", "main.js"))) {
  console.error("dist/ is missing: run `npm run build` first");
  process.exit(1);
}

const home = mkdtempSync(join(tmpdir(), "carrierd-ws-bench-"));
const routesPath = join(home, "routes.yaml");
writeFileSync(
  routesPath,
  `version: 1
providers:
  demo: { plugin: demo }
models:
  - { name: demo, provider: demo, model: demo-reasoner, params: { delay_ms: ${DELAY_MS} } }
carriers:
  - match: {}
    fields: [reasoning_content]
`,
);

async function startGateway() {
  const pin = spawnSync("taskset", ["-c", "0", "true"]).status === 0 ? ["taskset", "-c", "0"] : [];
  const [command, ...args] = [...pin, process.execPath, join(root, "bin", "carrierd"), "gateway", "--port", "0", "--routes", routesPath, "--log-level", "warn"];
  const child = spawn(command, args, { env: { ...process.env, CARRIERD_HOME: home, CARRIERD_API_KEY: KEY }, stdio: ["ignore", "pipe", "inherit"] });
  let output = "";
  const port = await new Promise((resolve, reject) => {
    child.stdout.on("data", (data) => {
      output += data;
      const match = /carrierd listening on http:\/\/[^:]+:(\d+)/.exec(output);
      if (match) resolve(Number(match[1]));
    });
    child.once("exit", (code) => reject(new Error(`gateway exited ${code}: ${output}`)));
  });
  child.stdout.resume();
  return { child, port };
}

function percentile(sorted, p) {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function streamRequest(port, index) {
  const started = now();
  const response = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "demo", stream: true, messages: [{ role: "user", content: `What is ${index} + 1?` }] }),
  });
  await response.text();
  if (response.status !== 200) throw new Error(`request failed: ${response.status}`);
  return now() - started;
}

/** CONCURRENCY loops of back-to-back streaming requests for SECONDS. */
async function drive(port) {
  const durations = [];
  const deadline = now() + SECONDS * 1000;
  let index = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (now() < deadline) durations.push(await streamRequest(port, index++));
    }),
  );
  return durations.sort((a, b) => a - b);
}

/** Runs in a worker thread: opens its share of the subscribers and records receipt latency. */
async function subscriberWorker({ port, count }) {
  const stats = { latencies: [], messages: 0, dropped: 0, slowCloses: 0 };
  const sockets = [];
  for (let i = 0; i < count; i++) {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/v1/events`, { headers: { authorization: `Bearer ${KEY}` } });
    ws.on("message", (data) => {
      const received = now();
      const message = JSON.parse(data.toString());
      if (message.type === "dropped") stats.dropped += message.count;
      else if (message.ts && stats.recording) {
        stats.messages++;
        stats.latencies.push(received - Date.parse(message.ts));
      }
    });
    ws.on("close", (code) => code === 1013 && stats.slowCloses++);
    sockets.push(ws);
    // open in small batches so the accept queue never overflows
    if (i % 100 === 99) await Promise.all(sockets.slice(-100).map((socket) => once(socket, "open")));
  }
  await Promise.all(sockets.map((socket) => (socket.readyState === WebSocket.OPEN ? undefined : once(socket, "open"))));
  await Promise.all(
    sockets.map((socket) => {
      socket.send(JSON.stringify({ type: "subscribe", sessions: ["*"] }));
      return once(socket, "message");
    }),
  );
  stats.recording = true;
  parentPort.postMessage({ ready: true });
  await once(parentPort, "message"); // "stop"
  for (const socket of sockets) socket.terminate();
  parentPort.postMessage({ stats: { ...stats, latencies: Float64Array.from(stats.latencies) } });
}

/** Subscribers spread over WORKERS threads, so reading 1,000 sockets does not starve the request driver. */
async function openSubscribers(port) {
  const workers = Array.from({ length: WORKERS }, (_, index) => {
    const count = Math.floor(SUBSCRIBERS / WORKERS) + (index < SUBSCRIBERS % WORKERS ? 1 : 0);
    return new Worker(fileURLToPath(import.meta.url), { workerData: { port, count } });
  });
  await Promise.all(workers.map((worker) => once(worker, "message")));
  return {
    async stop() {
      const results = await Promise.all(
        workers.map(async (worker) => {
          const done = once(worker, "message");
          worker.postMessage("stop");
          const [{ stats }] = await done;
          await worker.terminate();
          return stats;
        }),
      );
      const latencies = results.flatMap((stats) => Array.from(stats.latencies)).sort((a, b) => a - b);
      const sum = (name) => results.reduce((total, stats) => total + stats[name], 0);
      return { latencies, messages: sum("messages"), dropped: sum("dropped"), slowCloses: sum("slowCloses") };
    },
  };
}

function rssMiB(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

/** CPU seconds (user + system) a process has used so far. */
function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

const gateway = await startGateway();
try {
  console.log(`carrierd ws fan-out: ${SUBSCRIBERS} subscribers, ${CONCURRENCY} concurrent streams, demo paced at ${DELAY_MS} ms/token, ${SECONDS} s per phase`);
  const baseline = await drive(gateway.port);
  const subscribers = await openSubscribers(gateway.port);
  const rssBefore = rssMiB(gateway.child.pid);
  const cpuBefore = cpuSeconds(gateway.child.pid);
  const loaded = await drive(gateway.port);
  const cpu = cpuSeconds(gateway.child.pid) - cpuBefore;
  await new Promise((resolve) => setTimeout(resolve, 500)); // let the last deliveries land
  const stats = await subscribers.stop();
  const latencies = stats.latencies;
  const fmt = (ms) => `${ms.toFixed(1)} ms`;
  console.table({
    "requests, no subscribers": { count: baseline.length, p50: fmt(percentile(baseline, 50)), p99: fmt(percentile(baseline, 99)) },
    [`requests, ${SUBSCRIBERS} subscribers`]: { count: loaded.length, p50: fmt(percentile(loaded, 50)), p99: fmt(percentile(loaded, 99)) },
    "event delivery latency": {
      count: latencies.length,
      p50: fmt(percentile(latencies, 50)),
      p90: fmt(percentile(latencies, 90)),
      p99: fmt(percentile(latencies, 99)),
      max: fmt(latencies.at(-1) ?? NaN),
    },
  });
  console.log(`deliveries: ${stats.messages} (${Math.round(stats.messages / SECONDS)}/s), dropped: ${stats.dropped}, closed 1013: ${stats.slowCloses}`);
  console.log(
    `gateway CPU while loaded: ${((cpu / SECONDS) * 100).toFixed(0)}% of a core (${((cpu * 1e6) / Math.max(1, stats.messages)).toFixed(1)} µs per delivery), RSS ${rssBefore.toFixed(0)} → ${rssMiB(gateway.child.pid).toFixed(0)} MiB`,
  );
  console.log("latency = client receipt − the event's ts (1 ms resolution, same clock)");
} finally {
  gateway.child.kill("SIGTERM");
  await once(gateway.child, "exit");
  rmSync(home, { recursive: true, force: true });
}

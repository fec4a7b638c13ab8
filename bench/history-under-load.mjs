// Whether one key searching session history as hard as it can slows the others (docs/operators.md#session-history-under-load).
// A store of SESSIONS sessions × TURNS turns; another key's chat requests, one after another, timed idle and then while
// PARALLEL loops of `GET /v1/sessions?q=…` (a text no turn holds: every turn is read) run without pause under the owner
// key, which searches every key's sessions, each loop waiting what Retry-After says when refused (FLOOD=1: not).
// Prints each phase's chat p50/p95 and what the searches were answered.
//   npx tsc -p tsconfig.json && node bench/history-under-load.mjs [sqlite|postgres|both] [sessions=5000] [turns=2]
//   CHECKOUT=/path/to/other/checkout measures that build's bin/carrierd instead (its dist/ built).
import { execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { KEY } from "./gateway.mjs";
import { postgresForBench } from "./postgres-store.mjs";
import { startPrefilledCarrierd } from "./prefill.mjs";
import { startPinned, stop } from "./processes.mjs";

const which = process.argv[2] ?? "both";
const sessions = Number(process.argv[3] ?? 5000);
const turnsPerSession = Number(process.argv[4] ?? 2);
const checkout = process.env.CHECKOUT ?? fileURLToPath(new URL("..", import.meta.url));
const PARALLEL = Number(process.env.PARALLEL ?? 8);
// FLOOD=1: the searching loops ignore Retry-After and ask again at once (a flood of requests, whatever they ask);
// ASK=/v1/models: the loops ask that instead of searching (what a flood of requests costs by itself, to compare)
const FLOOD = process.env.FLOOD === "1";
const CHATS = Number(process.env.CHATS ?? 300);
const here = (path) => fileURLToPath(new URL(path, import.meta.url));

async function chatLatencies(port, key, count) {
  const samples = [];
  const body = JSON.stringify({ model: "bench", messages: [{ role: "user", content: "a short question" }] });
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const response = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body,
    });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`chat answered ${response.status}`);
    samples.push(performance.now() - started);
  }
  samples.sort((a, b) => a - b);
  const at = (q) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))].toFixed(1);
  return { p50: at(0.5), p95: at(0.95) };
}

/**
 * PARALLEL loops searching until stopped, in a process of their own (so the
 * chat timings are not the searching client's own event loop); what they
 * were answered, by status, and a 200's median time.
 */
function searchAsHardAsItCan(port) {
  const child = spawn(process.execPath, ["--input-type=module", "-e", SEARCHER], {
    env: { ...process.env, PORT: String(port), KEY, PARALLEL: String(PARALLEL), FLOOD: FLOOD ? "1" : "0" },
    stdio: ["pipe", "pipe", "inherit"],
  });
  let output = "";
  child.stdout.on("data", (data) => (output += data));
  return {
    async stop() {
      child.stdin.end("stop\n");
      await once(child, "exit");
      return JSON.parse(output);
    },
  };
}

const SEARCHER = `
const statuses = {};
const answered = [];
let running = true;
process.stdin.on("data", () => (running = false));
const loop = async () => {
  while (running) {
    const started = performance.now();
    const path = process.env.ASK || "/v1/sessions?limit=20&q=zebra-nowhere-" + Math.random().toString(36).slice(2, 6);
    const response = await fetch("http://127.0.0.1:" + process.env.PORT + path, {
      headers: { authorization: "Bearer " + process.env.KEY },
    });
    await response.arrayBuffer();
    statuses[response.status] = (statuses[response.status] ?? 0) + 1;
    if (response.status === 200) answered.push(performance.now() - started);
    const retryAfter = Number(response.headers.get("retry-after"));
    if (process.env.FLOOD !== "1" && retryAfter > 0) await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000));
  }
};
await Promise.all(Array.from({ length: Number(process.env.PARALLEL) }, loop));
answered.sort((a, b) => a - b);
process.stdout.write(JSON.stringify({ statuses, searchP50: answered.length ? answered[Math.floor(answered.length / 2)].toFixed(0) : "-" }));
`;

async function measure(backend) {
  const dir = mkdtempSync(join(tmpdir(), "carrierd-history-load-"));
  const pg = backend === "postgres" ? await postgresForBench() : undefined;
  if (pg?.problem) {
    console.log(`postgres: skipped, ${pg.problem}`);
    return;
  }
  const env = pg ? { CARRIERD_STORE: pg.url } : {};
  const upstream = await startPinned(1, [here("./upstream.mjs")]);
  let gateway;
  try {
    gateway = await startPrefilledCarrierd(upstream.port, dir, { turns: sessions * turnsPerSession, templateTurns: turnsPerSession, keys: 1, env, checkout });
    const other = execFileSync(process.execPath, [join(checkout, "bin/carrierd"), "keys", "create", "--name", "other", "--json"], {
      env: { ...process.env, CARRIERD_HOME: gateway.home, CARRIERD_API_KEY: KEY, ...env },
    });
    const otherKey = JSON.parse(other.toString()).secret;
    // the key ring polls the store for new keys
    for (let i = 0; i < 100; i++) {
      const probe = await fetch(`http://127.0.0.1:${gateway.port}/v1/models`, { headers: { authorization: `Bearer ${otherKey}` } });
      if (probe.status === 200) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await chatLatencies(gateway.port, otherKey, 50); // warm-up
    const idle = await chatLatencies(gateway.port, otherKey, CHATS);
    const search = searchAsHardAsItCan(gateway.port);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const loaded = await chatLatencies(gateway.port, otherKey, CHATS);
    const searches = await search.stop();
    console.log(
      `${backend}${FLOOD ? " (flood)" : ""}: ${sessions} sessions × ${turnsPerSession} turns; other key's chat p50 ${idle.p50} ms idle, ${loaded.p50} ms while ${PARALLEL} searches run ` +
        `(${(Number(loaded.p50) / Number(idle.p50)).toFixed(2)}×; p95 ${idle.p95} → ${loaded.p95} ms); searches answered ${JSON.stringify(searches.statuses)}, a 200's p50 ${searches.searchP50} ms`,
    );
  } finally {
    await stop(gateway);
    await stop(upstream);
    await pg?.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

for (const backend of which === "both" ? ["sqlite", "postgres"] : [which]) await measure(backend);

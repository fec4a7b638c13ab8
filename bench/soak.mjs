// The soak (not the suite): carrierd under a sustained streamed load, then
// killed with SIGKILL under concurrent clients, several times.
//   npm run soak                                   5-minute soak, 3 kill -9 runs
//   SOAK_SECONDS=60 KILL_RUNS=2 npm run soak       a short one
//   SOAK_MODE=repeated npm run soak                conversations whose answers repeat, 5 minutes:
//                                                  CPU per request per interval, fails if it grows
//   SOAK_MODE=long npm run soak                    the same with half the answers distinct, 30 minutes
//   BENCH_STORE=postgres, PREFILL_TURNS=N          either on PostgreSQL, from a pre-filled store
//                                                  (see conversation-soak.mjs)
// Soak: the load generator streams requests at CONNS connections for SOAK_SECONDS while the
// gateway's RSS, open fds, WAL size and /health latency are sampled every
// SAMPLE_SECONDS. Durability: KILL_CLIENTS clients each stream turns into a
// session of their own; after KILL_AFTER_MS the gateway gets SIGKILL, is
// restarted, and every turn a client saw [DONE] for must be in state.db
// (lost turns), `PRAGMA integrity_check` must say ok, and the restart time is
// taken from spawn to the listening line.
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { conversationSoak } from "./conversation-soak.mjs";
import { KEY, startCarrierd } from "./gateway.mjs";
import { memoryOf, startPinned, stop } from "./processes.mjs";
import { load } from "./load.mjs";

const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const SOAK_SECONDS = Number(process.env.SOAK_SECONDS ?? 300);
const SAMPLE_SECONDS = Number(process.env.SAMPLE_SECONDS ?? 5);
const CONNS = Number(process.env.CONNS ?? 32);
const KILL_RUNS = Number(process.env.KILL_RUNS ?? 3);
const KILL_CLIENTS = Number(process.env.KILL_CLIENTS ?? 100);
const KILL_AFTER_MS = Number(process.env.KILL_AFTER_MS ?? 3000);
const work = mkdtempSync(join(tmpdir(), "carrierd-soak-"));

const MODE = process.env.SOAK_MODE ?? "kill";
if (!["kill", "repeated", "long"].includes(MODE)) throw new Error(`SOAK_MODE is kill (the default), repeated or long: ${MODE}`);

const upstream = await startPinned(1, [here("./upstream.mjs")]);
try {
  if (MODE === "kill") {
    await soak();
    await durability();
  } else if (!(await conversationSoak(MODE, work, upstream.port))) process.exitCode = 1;
} finally {
  await stop(upstream);
  rmSync(work, { recursive: true, force: true });
}

async function soak() {
  const dir = join(work, "soak");
  const gateway = await startCarrierd(upstream.port, dir);
  try {
    const bodyFile = join(dir, "stream.json");
    writeFileSync(bodyFile, JSON.stringify({ model: "bench", stream: true, messages: [{ role: "user", content: "soak" }] }));
    const samples = [];
    const sampler = setInterval(async () => samples.push(await sample(gateway)), SAMPLE_SECONDS * 1000);
    const first = await sample(gateway);
    let run;
    try {
      run = await load({ url: `http://127.0.0.1:${gateway.port}/v1/chat/completions`, connections: CONNS, seconds: SOAK_SECONDS, bodyFile, key: KEY, core: 1 });
    } finally {
      clearInterval(sampler);
    }
    const last = await sample(gateway);
    const all = [first, ...samples, last];
    const range = (name, unit, digits = 1) =>
      `${Math.min(...all.map((s) => s[name])).toFixed(digits)}–${Math.max(...all.map((s) => s[name])).toFixed(digits)} ${unit} (end ${last[name].toFixed(digits)})`;
    console.log(
      `soak: ${SOAK_SECONDS} s streamed at c=${CONNS}: ${run.rps.toFixed(0)} req/s, ${Math.round(run.rps * SOAK_SECONDS)} requests, 0 non-2xx, p50 ${run.p50.toFixed(2)} ms, p99 ${run.p99.toFixed(2)} ms`,
    );
    console.log(`soak: RSS ${range("rssMiB", "MiB")}; fds ${range("fds", "", 0)}; WAL ${range("walMiB", "MiB", 2)}; /health ${range("healthMs", "ms", 2)}`);
  } finally {
    await stop(gateway);
  }
}

async function sample(gateway) {
  const { rssMiB } = await memoryOf(gateway.pid);
  const fds = readdirSync(`/proc/${gateway.pid}/fd`).length;
  let walMiB = 0;
  try {
    walMiB = statSync(join(gateway.home, "state.db-wal")).size / 1024 / 1024;
  } catch {
    // no WAL right now (truncated)
  }
  const started = performance.now();
  await fetch(`http://127.0.0.1:${gateway.port}/health`);
  return { rssMiB, fds, walMiB, healthMs: performance.now() - started };
}

async function durability() {
  const dir = join(work, "kill");
  let totals = { acknowledged: 0, lost: 0, unacknowledgedStored: 0 };
  for (let run = 0; run < KILL_RUNS; run++) {
    const gateway = await startCarrierd(upstream.port, dir);
    const acknowledged = new Map();
    let killed = false;
    const clients = Array.from({ length: KILL_CLIENTS }, (_, index) => client(gateway.port, `kill-${run}-${index}`, acknowledged, () => killed));
    await new Promise((resolve) => setTimeout(resolve, KILL_AFTER_MS));
    killed = true;
    gateway.child.kill("SIGKILL");
    await Promise.allSettled(clients);
    const restartedAt = performance.now();
    const again = await startCarrierd(upstream.port, dir);
    const restartMs = performance.now() - restartedAt;
    await stop(again); // its start recovered the journal; stopped, state.db is read alone
    const database = new Database(join(dir, "home", "state.db"), { readonly: true });
    const integrity = database.pragma("integrity_check", { simple: true });
    const stored = new Map(
      database
        .prepare("SELECT session_id AS id, count(*) AS n FROM turns WHERE session_id LIKE ? GROUP BY session_id")
        .all(`kill-${run}-%`)
        .map((row) => [row.id, row.n]),
    );
    database.close();
    let lost = 0;
    let extra = 0;
    let acks = 0;
    for (const [session, count] of acknowledged) {
      acks += count;
      const have = stored.get(session) ?? 0;
      lost += Math.max(0, count - have);
      extra += Math.max(0, have - count);
    }
    for (const [session, have] of stored) if (!acknowledged.has(session)) extra += have;
    totals = { acknowledged: totals.acknowledged + acks, lost: totals.lost + lost, unacknowledgedStored: totals.unacknowledgedStored + extra };
    // a turn is committed before its [DONE] leaves, so at most one per client (the one in flight at the kill) is stored without an acknowledgement
    console.log(
      `kill -9 run ${run + 1}: ${KILL_CLIENTS} clients, ${acks} acknowledged turns, ${lost} lost, ${extra} stored but not acknowledged (in flight at the kill), integrity_check ${integrity}, restart ${restartMs.toFixed(0)} ms`,
    );
  }
  console.log(`kill -9 total: ${totals.acknowledged} acknowledged turns over ${KILL_RUNS} runs, ${totals.lost} lost`);
}

/** Streams turns into `session` until the gateway is gone; counts those whose stream ended with [DONE] and no error. */
async function client(port, session, acknowledged, killed) {
  for (let turn = 0; !killed(); turn++) {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", "x-session-id": session },
        body: JSON.stringify({ model: "bench", stream: true, messages: [{ role: "user", content: `${session} turn ${turn}` }] }),
      });
      const text = await response.text();
      if (response.status === 200 && text.endsWith("data: [DONE]\n\n") && !text.includes('"error"'))
        acknowledged.set(session, (acknowledged.get(session) ?? 0) + 1);
    } catch {
      return; // the gateway was killed mid-request
    }
  }
}

// The growth soak (`SOAK_MODE=repeated` or `long` in soak.mjs): clients hold
// conversations with carrierd the way a stateless frontend with a session id
// does (the whole history resent, X-Session-Id set), each SOAK_TURNS turns
// long, then start the next; every request stores a turn, so the store grows
// for as long as it runs. Every SAMPLE_SECONDS it prints the interval's
// requests, the gateway's CPU per request (and the database's, on
// PostgreSQL) and the store's size; at the end it fails (exit code 1) when
// the last interval's CPU per request is more than 25 % above the first's,
// or any request failed.
//
// repeated: every answer is the same text (model bench-repeat), so a turn
//   cannot be told from the others by its text and is placed by its position
//   in the session: the case whose cost once grew with the store.
// long: half the clients repeated, half with answers of their own, 30
//   minutes by default; with PREFILL_TURNS it starts from a big store.
import { execFileSync } from "node:child_process";
import { statSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { KEY } from "./gateway.mjs";
import { startPrefilledCarrierd } from "./prefill.mjs";
import { backendCpuBetween, postgresForBench } from "./postgres-store.mjs";
import { cpuMsOf, stop } from "./processes.mjs";

/** How much more CPU per request the last interval may take than the first. */
const GROWTH_LIMIT = 1.25;

export async function conversationSoak(mode, work, upstreamPort) {
  const seconds = Number(process.env.SOAK_SECONDS ?? (mode === "long" ? 1800 : 300));
  const sampleSeconds = Number(process.env.SAMPLE_SECONDS ?? (mode === "long" ? 60 : 10));
  const warmupSeconds = Number(process.env.SOAK_WARMUP_SECONDS ?? 10);
  const clients = Number(process.env.CONNS ?? 16);
  const turnsPerSession = Number(process.env.SOAK_TURNS ?? 10);
  const prefill = Number(process.env.PREFILL_TURNS ?? 0);
  const store = process.env.BENCH_STORE === "postgres" ? await postgresForBench() : undefined;
  if (store?.problem) throw new Error(store.problem);
  const dir = join(work, `conversations-${mode}`);
  const gateway = await startPrefilledCarrierd(upstreamPort, dir, { turns: prefill, env: store ? { CARRIERD_STORE: store.url } : {} });
  // the clients share the upstream emulator's core, as the load generator does in the other benchmarks; carrierd has core 0
  execFileSync("taskset", ["-pc", "1", String(process.pid)], { stdio: "ignore" });
  const counts = { ok: 0, failed: 0, firstFailure: undefined };
  let running = true;
  const models = Array.from({ length: clients }, (_, index) => (mode === "long" && index % 2 === 1 ? "bench" : "bench-repeat"));
  const loops = models.map((model, index) => converse(gateway.port, `soak-${process.pid}-${index}`, model, turnsPerSession, counts, () => running));
  try {
    await sleep(warmupSeconds * 1000);
    const intervals = [];
    let before = await reading(gateway, store, counts);
    for (let elapsed = 0; elapsed < seconds; elapsed += sampleSeconds) {
      await sleep(sampleSeconds * 1000);
      const now = await reading(gateway, store, counts);
      const requests = now.ok - before.ok;
      const interval = {
        requests,
        gatewayMs: (now.gatewayCpu - before.gatewayCpu) / requests,
        databaseMs: store ? backendCpuBetween(before.databaseCpu, now.databaseCpu) / requests : 0,
      };
      interval.cpuMs = interval.gatewayMs + interval.databaseMs;
      intervals.push(interval);
      const size = await storeBytes(gateway, store);
      console.log(
        `${String(intervals.length).padStart(3)} ${(warmupSeconds + elapsed + sampleSeconds).toFixed(0).padStart(5)} s: ${(requests / sampleSeconds).toFixed(0)} req/s, CPU ${interval.cpuMs.toFixed(2)} ms/request${store ? ` (gateway ${interval.gatewayMs.toFixed(2)}, database ${interval.databaseMs.toFixed(2)})` : ""}, ${(prefill + now.ok).toLocaleString("en")} turns stored, store ${(size / 1024 / 1024).toFixed(1)} MiB`,
      );
      before = now;
    }
    running = false;
    await Promise.all(loops);
    const [first, last] = [intervals[0], intervals.at(-1)];
    const growth = last.cpuMs / first.cpuMs;
    console.log(
      `soak ${mode} (${store ? "PostgreSQL" : "SQLite"}, c=${clients}, ${turnsPerSession} turns per session): CPU per request first interval ${first.cpuMs.toFixed(2)} ms, last ${last.cpuMs.toFixed(2)} ms (×${growth.toFixed(2)}, limit ×${GROWTH_LIMIT}); ${counts.ok} requests, ${counts.failed} failed`,
    );
    if (counts.failed > 0) console.log(`soak ${mode}: FAILED: ${counts.failed} requests failed, the first: ${counts.firstFailure}`);
    if (growth > GROWTH_LIMIT) console.log(`soak ${mode}: FAILED: CPU per request grew ×${growth.toFixed(2)} as the store grew`);
    return growth <= GROWTH_LIMIT && counts.failed === 0;
  } finally {
    running = false;
    await Promise.allSettled(loops);
    await stop(gateway);
    await store?.drop();
  }
}

/** One client: conversations of `turns` turns, one after the other, until told to stop. */
async function converse(port, prefix, model, turns, counts, running) {
  for (let session = 0; running(); session++) {
    const sessionId = `${prefix}-${session}`;
    const messages = [{ role: "system", content: "You are a soak test." }];
    for (let turn = 0; turn < turns && running(); turn++) {
      messages.push({ role: "user", content: `question ${turn}` });
      try {
        const response = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
          method: "POST",
          headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", "x-session-id": sessionId },
          body: JSON.stringify({ model, messages }),
        });
        const text = await response.text();
        if (response.status !== 200) throw new Error(`${response.status} ${text.slice(0, 200)}`);
        messages.push({ role: "assistant", content: JSON.parse(text).choices[0].message.content });
        counts.ok++;
      } catch (error) {
        counts.failed++;
        counts.firstFailure ??= error.message;
        break;
      }
    }
  }
}

async function reading(gateway, store, counts) {
  return { ok: counts.ok, gatewayCpu: await cpuMsOf(gateway.pid), databaseCpu: store ? await store.backendCpu() : undefined };
}

/** state.db and its WAL, or the PostgreSQL database's size. */
async function storeBytes(gateway, store) {
  if (store) {
    const client = new pg.Client({ connectionString: store.url });
    await client.connect();
    try {
      return Number((await client.query("SELECT pg_database_size(current_database()) AS size")).rows[0].size);
    } finally {
      await client.end();
    }
  }
  let bytes = 0;
  for (const file of ["state.db", "state.db-wal"]) {
    try {
      bytes += statSync(join(gateway.home, file)).size;
    } catch {
      // no WAL right now
    }
  }
  return bytes;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

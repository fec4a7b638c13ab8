// The PostgreSQL request read alone (pg-request-lookup.ts), as one instance
// sends it: a 20-turn history's keys against a store holding those turns,
// with each turn's reasoning of REASONING_CHARS, timed from the driver's
// call to its answer, one connection, sequential. Alternating blocks of calls
// where this instance holds none of the carriers (the first time it reads a
// session) and all of them (every later turn of that session), so a slow
// spell of the host falls on both. Makes and drops a database of its own.
//   npx tsc -p tsconfig.json && node bench/pg-lookup.mjs
//   REASONING_CHARS=4000 CALLS=2000 BLOCKS=6 node bench/pg-lookup.mjs
import "reflect-metadata";
import pg from "pg";
import { LOOKUP } from "../dist/src/storage-postgres/pg-request-lookup.js";
import { openPostgresStorage } from "../dist/src/storage-postgres/postgres-storage.js";
import { statementName } from "../dist/src/storage-postgres/run.js";
import { median } from "./wrk.mjs";

const SERVER = process.env.CARRIERD_BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const REASONING_CHARS = Number(process.env.REASONING_CHARS ?? 500);
const CALLS = Number(process.env.CALLS ?? 2000);
const BLOCKS = Number(process.env.BLOCKS ?? 6);
const TURNS = 20;
const database = `carrierd_bench_lookup_${process.pid}`;

const admin = new pg.Client({ connectionString: SERVER });
await admin.connect();
await admin.query(`CREATE DATABASE ${database}`);
const url = new URL(SERVER);
url.pathname = `/${database}`;
try {
  const storage = await openPostgresStorage({ url: url.toString(), poolSize: 1 });
  const keys = [];
  const ids = [];
  for (let i = 0; i < TURNS; i++) {
    const turn = {
      id: `turn_bench_${i}`,
      sessionId: "sess_bench",
      parentTurnId: ids.at(-1),
      keyHash: "bench-key",
      model: "bench",
      plugin: "openai-compatible",
      provider: "bench",
      host: "127.0.0.1",
      upstreamModel: "bench-reasoner",
      prompt: [{ role: "user", content: `question ${i}` }],
      content: `answer ${i} `.repeat(30),
      toolCalls: [],
      reasoningText: "t".repeat(REASONING_CHARS),
      finishReason: "stop",
      fingerprint: `fingerprint_${i}_${"x".repeat(20)}`,
    };
    await storage.turns.save(turn);
    keys.push(turn.fingerprint);
    ids.push(turn.id);
  }
  await storage.close();
  // the statement as the pool runs it: same name, same connection setting (connection.ts)
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  await client.query("SET enable_seqscan = off");
  const timings = { none: [], all: [] };
  for (let block = 0; block < BLOCKS * 2; block++) {
    const held = block % 2 ? "all" : "none";
    const values = ["bench-key", keys, [], null, "bench", "127.0.0.1", "bench-reasoner", true, held === "all" ? ids : []];
    const times = [];
    for (let call = 0; call < CALLS; call++) {
      const start = performance.now();
      await client.query({ name: statementName(LOOKUP), text: LOOKUP, values });
      times.push((performance.now() - start) * 1000);
    }
    timings[held].push(median(times));
  }
  await client.end();
  const line = (held) => `${median(timings[held]).toFixed(0)} µs [${timings[held].map((t) => t.toFixed(0)).join(" ")}]`;
  console.log(`read of a ${TURNS}-turn history, reasoning ${REASONING_CHARS} chars a turn: p50 holding no carriers ${line("none")}; holding all ${line("all")}`);
} finally {
  await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await admin.end();
}

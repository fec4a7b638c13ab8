// The two PostgreSQL statements a chat request waits on, alone, as one
// instance sends them (one connection, sequential, no gateway around them):
// the floor under what the PostgreSQL store adds to a request on this
// machine. First the request's read (pg-request-lookup.ts): a 20-turn
// history's keys against a store holding those turns, each turn's reasoning
// REASONING_CHARS long, in alternating blocks where this instance holds none
// of the carriers (the first time it reads a session) and all of them
// (every later turn of that session), so a slow spell of the host falls on
// both. Then the turn's insert and commit (pg-turns.ts), with
// synchronous_commit on (the default) and off, alternating likewise. Each
// figure is the median of the blocks' p50s, timed from the driver's call to
// its answer. Makes and drops a database of its own.
//   npx tsc -p tsconfig.json && node bench/pg-statements.mjs
//   REASONING_CHARS=4000 CALLS=2000 BLOCKS=6 node bench/pg-statements.mjs
import "reflect-metadata";
import pg from "pg";
import { LOOKUP } from "../dist/src/storage/postgres/pg-request-lookup.js";
import { openPostgresStorage } from "../dist/src/storage/postgres/postgres-storage.js";
import { statementName } from "../dist/src/storage/postgres/run.js";
import { median } from "./load.mjs";

const SERVER = process.env.CARRIERD_BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const REASONING_CHARS = Number(process.env.REASONING_CHARS ?? 500);
const CALLS = Number(process.env.CALLS ?? 2000);
const BLOCKS = Number(process.env.BLOCKS ?? 6);
const TURNS = 20;
const database = `carrierd_bench_statements_${process.pid}`;

/** The URL with a server setting for its connections (libpq's `options`). */
function withOption(url, setting) {
  const copy = new URL(url);
  copy.searchParams.set("options", `-c ${setting}`);
  return copy.toString();
}

/** A stored turn the way the bench gateway's are: a 30-word answer, reasoning of REASONING_CHARS. */
function turnOf(id, sessionId, parentTurnId, fingerprint) {
  return {
    id,
    sessionId,
    parentTurnId,
    keyHash: "bench-key",
    model: "bench",
    plugin: "openai-compatible",
    provider: "bench",
    host: "127.0.0.1",
    upstreamModel: "bench-reasoner",
    prompt: [{ role: "user", content: "and now?" }],
    content: `answer `.repeat(30),
    toolCalls: [],
    reasoningText: "t".repeat(REASONING_CHARS),
    usage: { prompt_tokens: 100, completion_tokens: 60, total_tokens: 160 },
    finishReason: "stop",
    fingerprint,
  };
}

/** Median of `block`'s p50s over BLOCKS rounds of each variant, the variants taking turns. */
async function alternating(variants, block) {
  const p50s = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
  for (let round = 0; round < BLOCKS; round++)
    for (const [name, variant] of Object.entries(variants)) {
      const times = [];
      for (let call = 0; call < CALLS; call++) times.push(await block(variant));
      p50s[name].push(median(times));
    }
  return Object.fromEntries(
    Object.entries(p50s).map(([name, values]) => [name, `${median(values).toFixed(0)} µs [${values.map((t) => t.toFixed(0)).join(" ")}]`]),
  );
}

const timed = async (call) => {
  const start = performance.now();
  await call();
  return (performance.now() - start) * 1000;
};

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
    const turn = turnOf(`turn_bench_${i}`, "sess_bench", ids.at(-1), `fingerprint_${i}_${"x".repeat(20)}`);
    await storage.turns.save(turn);
    keys.push(turn.fingerprint);
    ids.push(turn.id);
  }
  // the statement on the store's own pool (its connection settings and column parsers), held carriers named outright
  const read = await alternating({ none: [], all: ids }, (held) =>
    timed(() =>
      storage.sql.query({
        name: statementName(LOOKUP),
        text: LOOKUP,
        values: ["bench-key", keys, [], null, "bench", "127.0.0.1", "bench-reasoner", true, held],
      }),
    ),
  );
  await storage.close();
  console.log(`read of a ${TURNS}-turn history, reasoning ${REASONING_CHARS} chars a turn, p50: holding no carriers ${read.none}; holding all ${read.all}`);
  const stores = {
    on: await openPostgresStorage({ url: url.toString(), poolSize: 1 }),
    off: await openPostgresStorage({ url: withOption(url, "synchronous_commit=off"), poolSize: 1 }),
  };
  let saved = 0;
  const insert = await alternating(stores, (storage) =>
    timed(() => storage.turns.save(turnOf(`turn_saved_${++saved}`, "sess_saved", undefined, `fingerprint_saved_${saved}`))),
  );
  for (const storage of Object.values(stores)) await storage.close();
  console.log(`a turn's insert and commit, p50: synchronous_commit on ${insert.on}; off ${insert.off}`);
} finally {
  await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await admin.end();
}

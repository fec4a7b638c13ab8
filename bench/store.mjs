// The PostgreSQL store against the SQLite one (issue 25), in the same run:
// added p50/p99 and throughput at c=1, 16 and 64, JSON and streamed, for a
// stateless client resending a 20-turn history (its replay lookup, its turn
// write). Needs a PostgreSQL server (CARRIERD_BENCH_PG_URL, default the
// local one with trust auth); makes and drops a database of its own.
// Run with `npm run bench:store`.
//
// Cores: both gateways on core 0, the upstream emulator and the load generator on core 1;
// PostgreSQL runs where the system puts it (its CPU is not on core 0 alone).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { buildHistory, KEY, startCarrierd } from "./gateway.mjs";
import { startPinned, stop } from "./processes.mjs";
import { load, median } from "./load.mjs";

const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
// a subset for a quick comparison, e.g. BENCH_CONNECTIONS=1 BENCH_MODES=json
const CONNECTIONS = (process.env.BENCH_CONNECTIONS ?? "1,16,64").split(",").map(Number);
const MODES = (process.env.BENCH_MODES ?? "json,stream").split(",");
const SERVER = process.env.CARRIERD_BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const work = mkdtempSync(join(tmpdir(), "carrierd-bench-store-"));
const database = `carrierd_bench_${process.pid}`;

async function admin(text) {
  const client = new pg.Client({ connectionString: SERVER });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

const storeUrl = new URL(SERVER);
storeUrl.pathname = `/${database}`;
await admin(`CREATE DATABASE ${database}`);
const upstream = await startPinned(1, [here("./upstream.mjs")]);
const sqlite = await startCarrierd(upstream.port, join(work, "sqlite"));
const postgres = await startCarrierd(upstream.port, join(work, "postgres"), { env: { CARRIERD_STORE: storeUrl.toString() } });
// the same database with commits that do not wait for the WAL to reach the disk: SQLite's durability (synchronous = NORMAL)
const asyncUrl = new URL(storeUrl);
asyncUrl.searchParams.set("options", "-c synchronous_commit=off");
const postgresAsync = await startCarrierd(upstream.port, join(work, "postgres-async"), { env: { CARRIERD_STORE: asyncUrl.toString() } });
try {
  const targets = [
    { name: "direct", url: `http://127.0.0.1:${upstream.port}/v1/chat/completions` },
    { name: "sqlite", url: `http://127.0.0.1:${sqlite.port}/v1/chat/completions`, port: sqlite.port },
    { name: "postgres", url: `http://127.0.0.1:${postgres.port}/v1/chat/completions`, port: postgres.port },
    { name: "postgresAsync", url: `http://127.0.0.1:${postgresAsync.port}/v1/chat/completions`, port: postgresAsync.port },
  ];
  const bodies = {};
  for (const target of targets.slice(1)) {
    // each gateway stores the history it is then asked to replay, as a stateless client's session
    const history = await buildHistory(target.port);
    for (const mode of ["json", "stream"]) {
      bodies[`${target.name}.${mode}`] = join(work, `${target.name}.${mode}.json`);
      writeFileSync(bodies[`${target.name}.${mode}`], JSON.stringify({ model: "bench", stream: mode === "stream", messages: history }));
    }
  }
  const bodyFor = (target, mode) => bodies[`${target.name === "direct" ? "sqlite" : target.name}.${mode}`];
  const rows = [];
  for (const mode of MODES) {
    for (const connections of CONNECTIONS) {
      const runs = Object.fromEntries(targets.map((target) => [target.name, []]));
      for (const target of targets) await load({ url: target.url, connections, seconds: 1, bodyFile: bodyFor(target, mode), key: KEY, core: 1 });
      for (let i = 0; i < RUNS; i++) {
        for (const target of targets)
          runs[target.name].push(await load({ url: target.url, connections, seconds: SECONDS, bodyFile: bodyFor(target, mode), key: KEY, core: 1 }));
      }
      const row = { mode, connections };
      for (const target of targets)
        row[target.name] = {
          p50: median(runs[target.name].map((r) => r.p50)),
          p99: median(runs[target.name].map((r) => r.p99)),
          rps: median(runs[target.name].map((r) => r.rps)),
        };
      for (const name of ["sqlite", "postgres", "postgresAsync"]) {
        row[name].addedP50 = row[name].p50 - row.direct.p50;
        row[name].addedP99 = row[name].p99 - row.direct.p99;
      }
      rows.push(row);
      console.log(
        `${mode.padEnd(6)} c=${String(connections).padEnd(3)} added p50 sqlite ${row.sqlite.addedP50.toFixed(3)} ms, postgres ${row.postgres.addedP50.toFixed(3)} ms ` +
          `(Δ ${(row.postgres.addedP50 - row.sqlite.addedP50).toFixed(3)}), postgres synchronous_commit=off ${row.postgresAsync.addedP50.toFixed(3)} ms ` +
          `(Δ ${(row.postgresAsync.addedP50 - row.sqlite.addedP50).toFixed(3)}); p99 sqlite ${row.sqlite.addedP99.toFixed(3)}, postgres ${row.postgres.addedP99.toFixed(3)}; ` +
          `rps sqlite ${row.sqlite.rps.toFixed(0)}, postgres ${row.postgres.rps.toFixed(0)}`,
      );
    }
  }
  mkdirSync(here("./results"), { recursive: true });
  writeFileSync(here("./results/store.json"), `${JSON.stringify({ measured_at: new Date().toISOString(), seconds: SECONDS, runs: RUNS, rows }, null, 2)}\n`);
} finally {
  await stop(postgresAsync).catch(() => undefined);
  await stop(postgres).catch(() => undefined);
  await stop(sqlite).catch(() => undefined);
  await stop(upstream).catch(() => undefined);
  rmSync(work, { recursive: true, force: true });
  await admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
}

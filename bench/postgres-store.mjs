// The PostgreSQL store for the benchmarks (issue 25): a database of the
// bench's own on the server (CARRIERD_BENCH_PG_URL, default the local one
// with trust auth), dropped at the end, and the CPU its backends use.
import { readFile } from "node:fs/promises";
import pg from "pg";

async function admin(server, text, values) {
  const client = new pg.Client({ connectionString: server, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    return await client.query(text, values);
  } finally {
    await client.end();
  }
}

/**
 * A fresh database for the bench, or why there is none (no server: the
 * PostgreSQL figures are left out, as the Redis ones are without Redis).
 */
export async function postgresForBench(server = process.env.CARRIERD_BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres", suffix = "") {
  const database = `carrierd_bench_${process.pid}${suffix}`;
  try {
    await admin(server, `CREATE DATABASE ${database}`);
  } catch (error) {
    return { problem: `no PostgreSQL at ${new URL(server).host} (${error.message.split("\n")[0]})` };
  }
  const url = new URL(server);
  url.pathname = `/${database}`;
  return {
    url: url.toString(),
    database,
    drop: () => admin(server, `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`),
    /**
     * CPU (ms, user + system) of every server backend connected to the
     * bench's database so far, by pid: each connection of a gateway's pool
     * is one backend process. The server runs on this machine, so /proc
     * has them.
     */
    async backendCpu() {
      const { rows } = await admin(server, `SELECT pid FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend'`, [database]);
      const cpu = new Map();
      for (const { pid } of rows) {
        try {
          const fields = (await readFile(`/proc/${pid}/stat`, "utf8")).split(") ")[1].split(" ");
          cpu.set(pid, (Number(fields[11]) + Number(fields[12])) * 10);
        } catch {
          // a backend that ended between the query and the read
        }
      }
      return cpu;
    },
  };
}

/** The backends' CPU between two backendCpu() readings, in ms: a backend new since the first counts whole. */
export function backendCpuBetween(before, after) {
  let total = 0;
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0);
  return total;
}

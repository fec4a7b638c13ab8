import { randomBytes } from "node:crypto";
import pg from "pg";

/**
 * The PostgreSQL server the store suites talk to: CARRIERD_TEST_PG_URL, else
 * the local service on its standard port (trust auth). The run's global
 * setup (postgres-global-setup.ts) makes one database for the whole run and
 * says here where it is, or why there is none.
 */
export const PG_SERVER_URL = process.env.CARRIERD_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
export const RUN_DATABASE_VARIABLE = "CARRIERD_TEST_PG_RUN_DATABASE";
export const SKIP_REASON_VARIABLE = "CARRIERD_TEST_PG_SKIP_REASON";

/** The run's own database (`carrierd_test_<random>`), or undefined when the suites are skipped. */
export function runDatabaseUrl(): string | undefined {
  return process.env[RUN_DATABASE_VARIABLE];
}

/** Why the PostgreSQL suites are skipped in this run, if they are. */
export function pgSkipReason(): string | undefined {
  return runDatabaseUrl() ? undefined : (process.env[SKIP_REASON_VARIABLE] ?? "no PostgreSQL database was prepared for this run");
}

/** Says loudly, once per file, how many tests of it will not run and why. */
export function announceSkipped(file: string, tests: number): void {
  const reason = pgSkipReason();
  if (reason) console.warn(`\n*** SKIPPING ${tests} PostgreSQL test(s) in ${file}: ${reason} ***\n`);
}

/** The URL with a different database name (the server's other parts kept). */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/**
 * A fresh, empty schema in the run's database, and a store URL that puts
 * everything carrierd creates in it (its `search_path`): tests share the
 * run's database and never each other's rows.
 */
export async function freshSchema(): Promise<{ url: string; drop: () => Promise<void> }> {
  const base = runDatabaseUrl();
  if (!base) throw new Error(`freshSchema: ${pgSkipReason()}`);
  const schema = `s_${randomBytes(6).toString("hex")}`;
  await once(base, `CREATE SCHEMA ${schema}`);
  const url = new URL(base);
  // libpq's startup options: every connection of the store starts in the schema
  url.searchParams.set("options", `-c search_path=${schema}`);
  return {
    url: url.toString(),
    drop: () => once(base, `DROP SCHEMA IF EXISTS ${schema} CASCADE`),
  };
}

/** One statement on a connection of its own. */
export async function once(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

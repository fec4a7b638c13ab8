import { randomBytes } from "node:crypto";
import { once, PG_SERVER_URL, RUN_DATABASE_VARIABLE, SKIP_REASON_VARIABLE, withDatabase } from "./postgres.js";

const HOW_TO_START =
  "start one (e.g. `docker run -d -p 5432:5432 -e POSTGRES_HOST_AUTH_METHOD=trust postgres:15`, or your distribution's postgresql service) " +
  "or point CARRIERD_TEST_PG_URL at one (a role allowed to CREATE DATABASE)";

/**
 * One database per test run, `carrierd_test_<random>`, created before the
 * first test file and dropped after the last, so runs sharing a server
 * never see each other's rows. Without a server: a failure under CI=true,
 * else the PostgreSQL suites are skipped and say so.
 */
export default async function setup(): Promise<() => Promise<void>> {
  const database = `carrierd_test_${randomBytes(6).toString("hex")}`;
  try {
    await once(PG_SERVER_URL, `CREATE DATABASE ${database}`);
  } catch (error) {
    const reason = `PostgreSQL at ${PG_SERVER_URL} is not usable (${error instanceof Error ? error.message : String(error)})`;
    if (process.env.CI === "true") throw new Error(`${reason}: the PostgreSQL suites need a server under CI; ${HOW_TO_START}`);
    process.env[SKIP_REASON_VARIABLE] = `${reason}; to run them, ${HOW_TO_START}`;
    console.warn(`\n*** PostgreSQL suites will be SKIPPED: ${process.env[SKIP_REASON_VARIABLE]} ***\n`);
    return async () => {};
  }
  process.env[RUN_DATABASE_VARIABLE] = withDatabase(PG_SERVER_URL, database);
  // a gateway a failed test left behind may still hold a connection: the database goes with its sessions
  return () => once(PG_SERVER_URL, `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
}

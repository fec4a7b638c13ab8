import "reflect-metadata";
import { connect } from "../../src/storage/postgres/connection.js";
import { afterEach, describe, expect, test } from "vitest";
import { migrate, POSTGRES_MIGRATIONS } from "../../src/storage/postgres/migrations.js";
import { openPostgresStorage, StoreUnreachableError } from "../../src/storage/postgres/postgres-storage.js";
import { announceSkipped, freshSchema, pgSkipReason } from "../support/postgres.js";

announceSkipped("test/storage/postgres-migrations.test.ts", 3);
describe.skipIf(pgSkipReason() !== undefined)("PostgreSQL schema migrations", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  test("three instances starting at once migrate once, and all three serve the same schema", async () => {
    const schema = await freshSchema();
    cleanups.push(schema.drop);
    const clients = [0, 1, 2].map(() => connect({ url: schema.url, poolSize: 1, connectTimeoutSeconds: 3 }));
    for (const client of clients) cleanups.push(() => client.end());
    const ran = await Promise.all(clients.map((client) => migrate(client)));
    // exactly one of them applied every version; the other two waited on the lock and found nothing to do
    expect(ran.map((versions) => versions.length).sort()).toEqual([0, 0, POSTGRES_MIGRATIONS.length]);
    const [applied] = clients;
    expect((await applied!.query(`SELECT version FROM carrierd_migrations`)).rows.map((row: { version: number }) => row.version)).toEqual(
      POSTGRES_MIGRATIONS.map((migration) => migration.version),
    );
    const storages = await Promise.all([0, 1, 2].map(() => openPostgresStorage({ url: schema.url, poolSize: 1 })));
    for (const storage of storages) cleanups.push(() => storage.close());
    await storages[0]!.verdicts.record({
      provider: "p",
      host: "h",
      model: "m",
      fields: ["reasoning"],
      status: 400,
      message: "no",
      sessionId: "sess_shared",
      keyHash: "k",
      clientModel: "m",
    });
    for (const storage of storages) expect(await storage.sessions.show("sess_shared")).toMatchObject({ id: "sess_shared" });
  });

  test("a migration that fails leaves the schema as it was (DDL is transactional) and is tried again at the next start", async () => {
    const schema = await freshSchema();
    cleanups.push(schema.drop);
    const client = connect({ url: schema.url, poolSize: 1, connectTimeoutSeconds: 3 });
    cleanups.push(() => client.end());
    const broken = [{ version: 1, name: "half", sql: "CREATE TABLE half_done (id text); SELECT no_such_function();" }];
    await expect(migrate(client, broken)).rejects.toThrow(/no_such_function/);
    expect((await client.query(`SELECT to_regclass('half_done') AS t`)).rows).toEqual([{ t: null }]);
    expect(await migrate(client)).toEqual(POSTGRES_MIGRATIONS.map((migration) => migration.version));
  });

  test("a server that is not there: openPostgresStorage fails with one line naming the server, its password redacted", async () => {
    // port 1 on loopback: nothing listens there, the connect is refused at once
    const error = await openPostgresStorage({ url: "postgres://carrierd:s3cret@127.0.0.1:1/nowhere", connectTimeoutSeconds: 2 }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(StoreUnreachableError);
    const message = (error as Error).message;
    expect(message).toMatch(/^cannot reach the PostgreSQL store at postgres:\/\/carrierd:\*\*\*@127\.0\.0\.1:1\/nowhere: /);
    expect(message).not.toContain("s3cret");
    expect(message).not.toContain("\n");
  });
});

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { describeStore, redactStoreUrl, resolveStore } from "../../src/foundation/config/store-choice.js";
import { carrierd, cleanEnv, startGatewayProcess } from "../foundation/cli-process.js";
import { announceSkipped, freshSchema, pgSkipReason } from "../support/postgres.js";

/** `--store` / CARRIERD_STORE as the daemon and every command read them, secrets never shown. */
describe("the store option", () => {
  test("sqlite by default; a postgres URL with its pool size; anything else refused, its secret redacted", () => {
    expect(resolveStore({}, {})).toEqual({ kind: "sqlite" });
    expect(resolveStore({}, { CARRIERD_STORE: "sqlite" })).toEqual({ kind: "sqlite" });
    expect(resolveStore({}, { CARRIERD_STORE: "postgres://u:pw@db:5432/carrierd" })).toEqual({
      kind: "postgres",
      url: "postgres://u:pw@db:5432/carrierd",
      poolSize: 4,
    });
    expect(resolveStore({ store: "postgresql://db/c", storePoolSize: 8 }, { CARRIERD_STORE: "sqlite" })).toEqual({
      kind: "postgres",
      url: "postgresql://db/c",
      poolSize: 8,
    });
    expect(resolveStore({}, { CARRIERD_STORE: "postgres://db/c", CARRIERD_STORE_POOL_SIZE: "2" })).toMatchObject({ poolSize: 2 });
    expect(() => resolveStore({}, { CARRIERD_STORE: "mysql://u:hunter2@db/c" })).toThrow("invalid store: mysql://u:***@db/c (sqlite, or a postgres:// URL)");
    expect(() => resolveStore({ store: "postgres://db/c", storePoolSize: 0 }, {})).toThrow(/invalid store pool size: 0/);
    expect(describeStore({ kind: "postgres", url: "postgres://carrierd:s3cret@db:5432/c?sslmode=require&sslpassword=k3y", poolSize: 4 })).toBe(
      "postgres://carrierd:***@db:5432/c?sslmode=require&sslpassword=***",
    );
    expect(redactStoreUrl("postgres://only-user@db/c")).toBe("postgres://only-user@db/c");
  });

  test("a PostgreSQL that cannot be reached at start: the gateway exits 1 with one clear line, the password redacted", async () => {
    const home = mkdtempSync(join(tmpdir(), "carrierd-store-down-"));
    try {
      writeFileSync(join(home, "routes.yaml"), "version: 1\nproviders:\n  demo: { plugin: demo }\nmodels:\n  - { name: demo, provider: demo }\n");
      // port 1 on loopback: nothing listens, the connect is refused at once
      const result = await carrierd(
        ["gateway", "--home", home, "--routes", join(home, "routes.yaml"), "--port", "0", "--store", "postgres://carrierd:s3cret@127.0.0.1:1/carrierd"],
        {
          env: cleanEnv({ CARRIERD_API_KEY: "k".repeat(32) }),
        },
      );
      expect(result.code).toBe(1);
      expect(result.stderr.trim().split("\n")).toEqual([
        expect.stringMatching(/^carrierd: cannot reach the PostgreSQL store at postgres:\/\/carrierd:\*\*\*@127\.0\.0\.1:1\/carrierd: /),
      ]);
      expect(result.stdout + result.stderr).not.toContain("s3cret");
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});

announceSkipped("test/scale/store-config.test.ts", 1);
describe.skipIf(pgSkipReason() !== undefined)("a gateway process on PostgreSQL", () => {
  let schema: Awaited<ReturnType<typeof freshSchema>>;
  let home: string;
  beforeAll(async () => {
    schema = await freshSchema();
    home = mkdtempSync(join(tmpdir(), "carrierd-store-up-"));
    writeFileSync(
      join(home, "routes.yaml"),
      "version: 1\nproviders:\n  demo: { plugin: demo }\nmodels:\n  - { name: demo, provider: demo, model: demo-reasoner }\ncarriers:\n  - match: {}\n    fields: [reasoning_content]\n",
    );
  });
  afterAll(async () => {
    rmSync(home, { recursive: true, force: true });
    await schema?.drop();
  });

  test("serves from the store, says which in its log and capabilities, and `sessions` / `routes explain` read the same store", async () => {
    const key = "k".repeat(32);
    const env = cleanEnv({ CARRIERD_API_KEY: key, CARRIERD_STORE: schema.url });
    const gateway = await startGatewayProcess(["--home", home, "--routes", join(home, "routes.yaml"), "--port", "0"], env);
    try {
      const answer = await fetch(`${gateway.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "demo", messages: [{ role: "user", content: "Hello" }] }),
      });
      expect(answer.status).toBe(200);
      const sessionId = answer.headers.get("x-session-id")!;
      const capabilities = (await (await fetch(`${gateway.url}/v1/capabilities`, { headers: { authorization: `Bearer ${key}` } })).json()) as {
        store: unknown;
      };
      expect(capabilities.store).toEqual({ backend: "postgres", url: redactStoreUrl(schema.url) });
      expect(gateway.stdout()).toContain("state is kept in PostgreSQL at ");
      // another process, the same store, no state.db anywhere
      const listed = await carrierd(["sessions", "list", "--home", mkdtempSync(join(tmpdir(), "carrierd-elsewhere-"))], { env });
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.stdout).toContain(sessionId);
      const explained = await carrierd(["routes", "explain", "--model", "demo", "--routes", join(home, "routes.yaml"), "--json"], { env });
      expect(explained.code, explained.stderr).toBe(0);
      expect(JSON.parse(explained.stdout)).toMatchObject({ store: redactStoreUrl(schema.url), verdicts: [] });
    } finally {
      await gateway.stop();
    }
  });
});

import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { carrierd, cleanEnv, startGatewayProcess } from "../foundation/cli-process.js";
import { openEvents } from "../events/ws-client.js";
import { DEMO_ROUTES, startTestGateway, storageOf, type TestGateway } from "../support/gateway.js";
import { addKey, bearer, keyRingOf, revokeKey } from "./keys-support.js";

/**
 * Keys change while the gateway runs: a revocation is refused on the next
 * request (within a second when made by another process), closes the key's
 * WebSockets with 4401, and lets its running streams finish.
 */
const PACED = DEMO_ROUTES.replace("model: demo-reasoner }", "model: demo-reasoner, params: { delay_ms: 20 } }");

let gateway: TestGateway;
beforeAll(async () => {
  gateway = await startTestGateway({ routes: PACED });
});
afterAll(() => gateway?.stop());

const models = (secret: string) => fetch(`${gateway.url}/v1/models`, { headers: bearer(secret) });
const cli = (...args: string[]) => carrierd(["keys", ...args, "--home", gateway.home], { env: cleanEnv() });
/** The same, for processes started together: on a loaded machine each may take most of the test's minute to start. */
const concurrentCli = (...args: string[]) => carrierd(["keys", ...args, "--home", gateway.home], { env: cleanEnv(), timeoutMs: 50_000 });

describe("revocation", () => {
  test("an open WebSocket of a revoked key is closed with 4401; others stay open", async () => {
    const wall = await addKey(gateway, "wall", { scopes: ["events"] });
    const other = await addKey(gateway, "other-wall", { scopes: ["events"] });
    const revoked = await openEvents(gateway, { key: wall });
    const kept = await openEvents(gateway, { key: other, auth: "message" });
    await revoked.subscribe({ sessions: ["*"] });
    await kept.subscribe({ sessions: ["*"] });
    await revokeKey(gateway, "wall");
    expect((await revoked.closed).code).toBe(4401);
    kept.send({ type: "ping" });
    expect(await kept.waitFor((message) => message.type === "pong")).toEqual({ type: "pong" });
    kept.close();
  });

  test("a rotated key's old secret closes its WebSocket too, and stops working; the new one works", async () => {
    const old = await addKey(gateway, "rotated-wall", { scopes: ["events"] });
    const client = await openEvents(gateway, { key: old });
    const rotated = await cli("rotate", "rotated-wall", "--json");
    expect(rotated.code).toBe(0);
    const { secret } = JSON.parse(rotated.stdout) as { secret: string };
    expect((await client.closed).code).toBe(4401);
    expect((await models(old)).status).toBe(401);
    const fresh = await openEvents(gateway, { key: secret });
    fresh.send({ type: "ping" });
    await fresh.waitFor((message) => message.type === "pong");
    fresh.close();
  });

  test("a stream running when its key is revoked finishes; the key's next request is a 401", async () => {
    const key = await addKey(gateway, "streamer");
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { ...bearer(key), "content-type": "application/json" },
      body: JSON.stringify({ model: "demo", stream: true, messages: [{ role: "user", content: "tell me a long story" }] }),
    });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = decoder.decode((await reader.read()).value);
    await revokeKey(gateway, "streamer");
    expect((await models(key)).status).toBe(401);
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += decoder.decode(chunk.value);
    expect(text).toContain("data: [DONE]");
    expect(text).toContain('"finish_reason":"stop"');
  });

  test("`carrierd keys revoke` in another process is in force here within one second", async () => {
    const created = await cli("create", "--name", "remote", "--json");
    expect(created.code).toBe(0);
    const { secret } = JSON.parse(created.stdout) as { secret: string };
    // created by another process: usable once the gateway's poll has seen it
    const createdAt = performance.now();
    while ((await models(secret)).status !== 200) expect(performance.now() - createdAt).toBeLessThan(1000);
    const revoked = await cli("revoke", "remote");
    expect(revoked.code).toBe(0);
    const revokedAt = performance.now();
    while ((await models(secret)).status !== 401) expect(performance.now() - revokedAt).toBeLessThan(1000);
  });
});

describe("two gateways on one state", () => {
  test("a key revoked through one gateway's store is refused by both within one second", async () => {
    // the second instance is another process on the same state.db (the owner key from the environment, as an operator runs it)
    const second = await startGatewayProcess(
      ["--port", "0", "--routes", gateway.routesPath, "--log-level", "warn"],
      cleanEnv({ CARRIERD_HOME: gateway.home, CARRIERD_API_KEY: gateway.key }),
    );
    try {
      const secret = await addKey(gateway, "two-instances");
      const on = (url: string) => fetch(`${url}/v1/models`, { headers: bearer(secret) }).then((response) => response.status);
      const createdAt = performance.now();
      while ((await on(second.url)) !== 200) expect(performance.now() - createdAt).toBeLessThan(1000);
      await storageOf(gateway).keys.update({ revoke: "two-instances" }); // no refresh: each instance learns of it by its own poll
      const revokedAt = performance.now();
      const refused = await Promise.all(
        [gateway.url, second.url].map(async (url) => {
          while ((await on(url)) !== 401) expect(performance.now() - revokedAt).toBeLessThan(1000);
          return performance.now() - revokedAt;
        }),
      );
      expect(Math.max(...refused)).toBeLessThan(1000);
    } finally {
      expect(await second.stop()).toBe(0);
    }
  });
});

describe("keys commands against a running gateway", () => {
  // Six CLI processes at once, each a whole Node start (about a second of CPU): the race on the store is the same with
  // four distinct names as with eight, and a 2-core machine shared with other work starts six in well under a minute.
  test("four concurrent creates all land, each secret works; two creates of one name: exactly one wins", async () => {
    const names = Array.from({ length: 4 }, (_, index) => `parallel-${index}`);
    const results = await Promise.all([
      ...names.map((name) => concurrentCli("create", "--name", name, "--json")),
      concurrentCli("create", "--name", "twice", "--json"),
      concurrentCli("create", "--name", "twice", "--json"),
    ]);
    const created = results.slice(0, names.length);
    expect(created.map((result) => result.code)).toEqual(names.map(() => 0));
    const secrets = created.map((result) => (JSON.parse(result.stdout) as { secret: string }).secret);
    expect(new Set(secrets).size).toBe(names.length);
    expect(
      results
        .slice(names.length)
        .map((result) => result.code)
        .sort(),
    ).toEqual([0, 1]);
    expect(results.slice(names.length).find((result) => result.code === 1)!.stderr).toMatch(/exists already/);
    await keyRingOf(gateway).refresh();
    for (const secret of secrets) expect((await models(secret)).status).toBe(200);
  }, 60_000);

  test("keys list shows scopes, last used and the request count, never a secret", async () => {
    const key = await addKey(gateway, "counted", { scopes: ["chat", "events"] });
    for (let index = 0; index < 3; index++) expect((await models(key)).status).toBe(200);
    // counts reach the store at most once a second, not once a request; a flush now stands for the next one
    const before = Date.now();
    await keyRingOf(gateway).flushUsage();
    const listed = await cli("list", "--json");
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toContain(key);
    const counted = (JSON.parse(listed.stdout) as { name: string; scopes: string[]; requests: number; last_used_at: string | null; status: string }[]).find(
      (entry) => entry.name === "counted",
    )!;
    expect(counted).toMatchObject({ scopes: ["chat", "events"], requests: 3, status: "active" });
    expect(Date.parse(counted.last_used_at!)).toBeLessThanOrEqual(before);
    const plain = await cli("list");
    expect(plain.stdout).toMatch(/^counted \[chat,events\] active, created .*, last used .*, 3 request\(s\)$/m);
    expect((await storageOf(gateway).keys.list()).keys!.find((entry) => entry.name === "counted")!.requests).toBe(3);
  });
});

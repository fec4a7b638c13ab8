import { afterAll, beforeAll, expect } from "vitest";
import { newDataScope, newSecret, secretHash } from "../../src/http/keys/secret.js";
import type { NewKey } from "../../src/storage/keys.js";
import { readSse, storageOf, type TestGateway } from "../support/gateway.js";
import { openEvents } from "../events/ws-client.js";
import { startRedisGateway } from "../events-redis/redis-gateways.js";
import { REDIS_URL, testRedis } from "../events-redis/redis-for-tests.js";
import { bearer, keyRingOf } from "./keys-support.js";

/**
 * Events shared through Redis (events: redis://…) keep their key: a
 * subscriber on one instance sees another instance's events only when its
 * key is granted them. The two instances hold the same keys, as two
 * gateways on one store do.
 */
const redis = await testRedis("test/keys/shared-events.test.ts");
const stream = redis.stream("keyed-events");
let a: TestGateway;
let b: TestGateway;
const secrets = { frontend: newSecret(), other: newSecret(), wall: newSecret() };
beforeAll(async () => {
  if (!redis.available) return;
  a = await startRedisGateway(REDIS_URL, stream);
  b = await startRedisGateway(REDIS_URL, stream);
  const base = { models: [], createdAt: Date.now(), expiresAt: null };
  const keys: NewKey[] = [
    { ...base, name: "frontend", secretHash: secretHash(secrets.frontend), dataScope: newDataScope(), scopes: ["chat"], eventsOf: [] },
    { ...base, name: "other", secretHash: secretHash(secrets.other), dataScope: newDataScope(), scopes: ["chat"], eventsOf: [] },
    { ...base, name: "wall", secretHash: secretHash(secrets.wall), dataScope: newDataScope(), scopes: ["events"], eventsOf: ["frontend"] },
  ];
  for (const gateway of [a, b]) {
    for (const key of keys) await storageOf(gateway).keys.update({ create: key });
    await keyRingOf(gateway).refresh();
  }
});
afterAll(async () => {
  await a?.stop();
  await b?.stop();
});

const streamed = async (gateway: TestGateway, secret: string, session: string) => {
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: "POST",
    headers: { ...bearer(secret), "content-type": "application/json", "x-session-id": session },
    body: JSON.stringify({ model: "demo", stream: true, messages: [{ role: "user", content: "hi" }] }),
  });
  expect((await readSse(response)).done).toBe(true);
};

redis.test("a wall on B sees the turns key 'frontend' made on A, not another key's; the owner key on B sees both", async () => {
  const wall = await openEvents(b, { key: secrets.wall });
  const owner = await openEvents(b);
  await wall.subscribe({ sessions: ["*"] });
  await owner.subscribe({ sessions: ["*"] });
  await streamed(a, secrets.other, "keyed-other");
  await streamed(a, secrets.frontend, "keyed-frontend");
  // one stream, one order: once the owner has the second turn's end, the first has gone by on both connections
  await owner.waitFor((message) => message.type === "turn.completed" && message.session_id === "keyed-frontend");
  await wall.waitFor((message) => message.type === "turn.completed" && message.session_id === "keyed-frontend");
  const sessions = (messages: Record<string, unknown>[]) =>
    new Set(messages.filter((message) => typeof message.turn_id === "string").map((message) => message.session_id));
  expect(sessions(wall.messages)).toEqual(new Set(["keyed-frontend"]));
  expect(sessions(owner.messages)).toEqual(new Set(["keyed-other", "keyed-frontend"]));
  for (const message of owner.messages) expect(Object.keys(message)).not.toContain("k");
  wall.close();
  owner.close();
});

import { afterAll, beforeAll, expect } from "vitest";
import type { TestGateway } from "../support/gateway.js";
import { loadEventValidators, schemaProblems } from "../events/event-schemas.js";
import { openEvents, type EventClient } from "../events/ws-client.js";
import { startRedisGateway, streamedTurn } from "./redis-gateways.js";
import { REDIS_URL, testRedis } from "./redis-for-tests.js";

const redis = await testRedis("test/events-redis/cross-instance.test.ts");
const validators = loadEventValidators();
const stream = redis.stream("events");
let a: TestGateway;
let b: TestGateway;
beforeAll(async () => {
  if (!redis.available) return;
  a = await startRedisGateway(REDIS_URL, stream);
  b = await startRedisGateway(REDIS_URL, stream);
});
afterAll(async () => {
  await a?.stop();
  await b?.stop();
});

type Message = Record<string, unknown>;
const turnEvents = (client: EventClient, sessionId: string) =>
  client.messages.filter((message) => message.session_id === sessionId && typeof message.turn_id === "string");

redis.test("a turn on A reaches a subscriber on B: same schemas, in order, each with an event_id, and A's own subscriber sees the same stream", async () => {
  const onB = await openEvents(b);
  await onB.subscribe({ sessions: ["cross-1"] });
  const onA = await openEvents(a);
  await onA.subscribe({ sessions: ["cross-1"] });
  expect(await streamedTurn(a, "cross-1")).toEqual({ status: 200, done: true });
  await onB.waitFor((message) => message.type === "turn.completed" && message.session_id === "cross-1");
  await onA.waitFor((message) => message.type === "turn.completed" && message.session_id === "cross-1");

  const seen = turnEvents(onB, "cross-1");
  expect(seen.flatMap((message) => schemaProblems(validators, message))).toEqual([]);
  expect(seen.map((message) => message.seq)).toEqual(seen.map((_, index) => index));
  expect(seen[0]).toMatchObject({ type: "turn.started", model: "demo", provider: "demo", route: 1 });
  expect(seen.at(-1)).toMatchObject({ type: "turn.completed", finish_reason: "stop" });
  expect(seen.map((message) => message.type)).toContain("reasoning.delta");
  // ids are the stream's, increasing, and both instances' subscribers got the very same events
  const ids = seen.map((message) => message.event_id as string);
  expect(ids.every((id) => /^\d+-\d+:\d+$/.test(id))).toBe(true);
  expect([...ids].sort(compareIds)).toEqual(ids);
  expect(turnEvents(onA, "cross-1")).toEqual(seen);
  onA.close();
  onB.close();
});

redis.test("filters apply to other instances' events as to local ones: sessions and event types", async () => {
  const onlyOther = await openEvents(b);
  await onlyOther.subscribe({ sessions: ["cross-other"] });
  const onlyCompleted = await openEvents(b);
  await onlyCompleted.subscribe({ events: ["turn.completed"] });
  await streamedTurn(a, "cross-2");
  // the stream is one order: once cross-other's turn arrives, cross-2's events have gone by
  await streamedTurn(a, "cross-other");
  await onlyOther.waitFor((message) => message.type === "turn.completed");
  await onlyCompleted.waitFor((message) => message.type === "turn.completed" && message.session_id === "cross-other");
  expect(onlyOther.messages.filter((message) => message.session_id === "cross-2")).toEqual([]);
  expect(onlyOther.messages.filter((message) => message.session_id === "cross-other").length).toBeGreaterThan(3);
  const types = new Set(onlyCompleted.messages.filter((message) => message.type !== "subscribed").map((message) => message.type));
  expect([...types]).toEqual(["turn.completed"]);
  expect(onlyCompleted.messages.filter((message) => message.type === "turn.completed").map((message) => message.session_id)).toEqual([
    "cross-2",
    "cross-other",
  ]);
  onlyOther.close();
  onlyCompleted.close();
});

redis.test("turns on both instances at once: every subscriber gets each turn complete and in order, whichever instance produced it", async () => {
  const watchers = [await openEvents(a), await openEvents(b)];
  for (const watcher of watchers) await watcher.subscribe();
  const sessions = Array.from({ length: 8 }, (_, index) => `cross-many-${index}`);
  const results = await Promise.all(sessions.map((session, index) => streamedTurn(index % 2 === 0 ? a : b, session)));
  expect(results.every((result) => result.status === 200 && result.done)).toBe(true);
  for (const watcher of watchers) {
    for (const session of sessions) {
      await watcher.waitFor((message) => message.type === "turn.completed" && message.session_id === session);
      const events = turnEvents(watcher, session);
      expect(events.map((message) => message.seq)).toEqual(events.map((_, index) => index));
    }
  }
  // one order for everyone: both subscribers saw the same sequence of ids
  const idsOf = (client: EventClient) => client.messages.filter((message: Message) => typeof message.event_id === "string").map((message) => message.event_id);
  expect(idsOf(watchers[0]!)).toEqual(idsOf(watchers[1]!));
  for (const watcher of watchers) watcher.close();
});

redis.test("/health says events are shared and ok; /v1/capabilities names the stream, never a password", async () => {
  expect(await (await b.fetch("/health")).json()).toEqual({ status: "ok", events: { backend: "redis", status: "ok" } });
  const secretUrl = REDIS_URL.replace("://", "://:hunter2-not-a-real-secret@");
  const withSecret = await startRedisGateway(secretUrl, stream);
  try {
    const capabilities = (await (await withSecret.fetch("/v1/capabilities")).json()) as { events: Record<string, unknown> };
    expect(capabilities.events).toEqual({ backend: "redis", url: secretUrl.replace("hunter2-not-a-real-secret", "***"), stream, max_length: 10_000 });
    expect(JSON.stringify(capabilities)).not.toContain("hunter2");
  } finally {
    await withSecret.stop();
  }
});

/** `<ms>-<seq>:<index>`, compared part by part. */
function compareIds(x: string, y: string): number {
  const parts = (id: string) => id.split(/[-:]/).map(BigInt);
  const [a, b] = [parts(x), parts(y)];
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
  return 0;
}

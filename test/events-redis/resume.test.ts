import { afterAll, beforeAll, expect, test } from "vitest";
import { DEMO_ROUTES, startTestGateway, type TestGateway } from "../support/gateway.js";
import { loadEventValidators, schemaProblems } from "../events/event-schemas.js";
import { openEvents, type EventClient } from "../events/ws-client.js";
import { startRedisGateway, streamedTurn } from "./redis-gateways.js";
import { REDIS_URL, testRedis } from "./redis-for-tests.js";

const redis = await testRedis("test/events-redis/resume.test.ts");
const validators = loadEventValidators();
let a: TestGateway;
let b: TestGateway;
beforeAll(async () => {
  if (!redis.available) return;
  a = await startRedisGateway(REDIS_URL, redis.stream("resume"));
  b = await startRedisGateway(REDIS_URL, redis.stream("resume"));
});
afterAll(async () => {
  await a?.stop();
  await b?.stop();
});

type Message = Record<string, unknown>;
const withIds = (client: EventClient) => client.messages.filter((message) => typeof message.event_id === "string");
const completedTurns = (client: EventClient, sessionId: string) =>
  client.messages.filter((message) => message.type === "turn.completed" && message.session_id === sessionId).length;

/** Each turn's events complete and in seq order, and no event twice. */
function expectWholeTurns(messages: Message[]): void {
  const ids = messages.map((message) => message.event_id);
  expect(new Set(ids).size).toBe(ids.length);
  const byTurn = new Map<unknown, Message[]>();
  for (const message of messages) byTurn.set(message.turn_id, [...(byTurn.get(message.turn_id) ?? []), message]);
  for (const events of byTurn.values()) {
    expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index));
    expect(events.at(-1)?.type).toBe("turn.completed");
  }
}

redis.test(
  "a dashboard that reconnects (to the other instance) with its last event_id gets exactly what it missed, then live events, no gap and nothing twice",
  async () => {
    const first = await openEvents(b);
    await first.subscribe({ sessions: ["resume-1"] });
    await streamedTurn(a, "resume-1", "turn one");
    await first.waitFor((message) => message.type === "turn.completed");
    const lastSeen = withIds(first).at(-1)!.event_id as string;
    const firstIds = new Set(withIds(first).map((message) => message.event_id));
    first.close();
    await first.closed;

    // missed while away: two turns, one per instance
    const onA = await openEvents(a);
    await onA.subscribe({ sessions: ["resume-1"] });
    await streamedTurn(a, "resume-1", "turn two");
    await streamedTurn(b, "resume-1", "turn three");
    // A's reader is past both turns before the dashboard comes back: what a connection gets before it subscribes counts as seen
    await onA.waitFor(() => completedTurns(onA, "resume-1") >= 2);
    onA.close();

    const again = await openEvents(a);
    const acknowledged = again.subscribe({ sessions: ["resume-1"], last_event_id: lastSeen } as never);
    // a turn that runs while the backlog is being sent lands after it, once
    const live = streamedTurn(b, "resume-1", "turn four");
    expect(await acknowledged).toMatchObject({ type: "subscribed", sessions: ["resume-1"] });
    await live;
    await again.waitFor(() => completedTurns(again, "resume-1") >= 3);
    await streamedTurn(a, "resume-1", "turn five");
    await again.waitFor(() => completedTurns(again, "resume-1") >= 4);

    const resumed = withIds(again);
    expect(again.messages.filter((message) => message.type === "gap")).toEqual([]);
    expect(resumed.some((message) => firstIds.has(message.event_id))).toBe(false);
    expect(resumed.flatMap((message) => schemaProblems(validators, message))).toEqual([]);
    expectWholeTurns(resumed);
    expect(new Set(resumed.map((message) => message.turn_id)).size).toBe(4);
    again.close();
  },
);

redis.test("a last_event_id the stream no longer holds (Redis lost the stream) is announced as a gap, then what the stream holds follows", async () => {
  const client = await openEvents(b);
  await client.subscribe({ sessions: ["resume-future"], last_event_id: "99999999999999-0" } as never);
  const gap = await client.waitFor((message) => message.type === "gap");
  expect(schemaProblems(validators, gap)).toEqual([]);
  expect(gap).toMatchObject({ reason: "trimmed", after_event_id: "99999999999999-0" });
  await streamedTurn(a, "resume-future");
  await client.waitFor((message) => message.type === "turn.completed");
  client.close();
});

redis.test("a malformed last_event_id is an error message; the connection stays open", async () => {
  const client = await openEvents(a);
  client.send({ type: "subscribe", last_event_id: "yesterday" });
  const error = await client.waitFor((message) => message.type === "error");
  expect(error).toMatchObject({ code: "invalid_subscribe", message: expect.stringContaining("last_event_id") });
  expect(schemaProblems(validators, error)).toEqual([]);
  client.send({ type: "ping" });
  await client.waitFor((message) => message.type === "pong");
  client.close();
});

redis.test("resuming from beyond the stream's MAXLEN window: a trimmed gap names the last id and the oldest kept, and the kept events follow", async () => {
  const stream = redis.stream("short");
  const short = await startRedisGateway(REDIS_URL, stream, { CARRIERD_EVENTS_MAXLEN: "10" });
  try {
    const watcher = await openEvents(short);
    await watcher.subscribe({ sessions: ["resume-short"] });
    await streamedTurn(short, "resume-short");
    await watcher.waitFor((message) => message.type === "turn.completed");
    const oldId = withIds(watcher)[0]!.event_id as string;
    watcher.close();
    // MAXLEN ~ trims whole nodes of the stream: keep streaming until Redis says it trimmed past oldId
    const check = redis.client();
    const oldEntry = oldId.split(":")[0]!;
    const trimmedPast = async () => (await check.xrange(stream, oldEntry, oldEntry)).length === 0;
    let turns = 0;
    while (!(await trimmedPast())) {
      await streamedTurn(short, "resume-short");
      // MAXLEN counts entries, each a flush of events (a demo turn is one or two): Redis trims in nodes of 100 entries
      expect(++turns).toBeLessThan(1000);
    }
    const resumed = await openEvents(short);
    // until it subscribes, a connection gets every live event: this instance's reader may still be handing out the last turns
    const acknowledged = await resumed.subscribe({ sessions: ["resume-short"], last_event_id: oldId } as never);
    const gap = await resumed.waitFor((message) => message.type === "gap");
    expect(gap).toMatchObject({ reason: "trimmed", after_event_id: oldId, first_event_id: expect.stringMatching(/^\d+-\d+$/) });
    expect(schemaProblems(validators, gap)).toEqual([]);
    await streamedTurn(short, "resume-short", "after the gap");
    await resumed.waitFor(
      (message) => message.type === "turn.completed" && resumed.messages.indexOf(message) > resumed.messages.indexOf(gap) && message.seq !== undefined,
    );
    const afterGap = resumed.messages.slice(resumed.messages.indexOf(gap) + 1);
    expect(afterGap.length).toBeGreaterThan(0);
    // the gap came first after the acknowledgement, before anything the resume sent
    expect(resumed.messages.indexOf(gap)).toBe(resumed.messages.indexOf(acknowledged) + 1);
    expect(afterGap.every((message) => typeof message.event_id === "string")).toBe(true);
    resumed.close();
  } finally {
    await short.stop();
  }
});

test("with local events, last_event_id is refused: they carry no ids", async () => {
  const local = await startTestGateway({ routes: DEMO_ROUTES });
  try {
    expect(await (await local.fetch("/health")).json()).toEqual({ status: "ok" });
    const client = await openEvents(local);
    client.send({ type: "subscribe", last_event_id: "1-0" });
    expect(await client.waitFor((message) => message.type === "error")).toMatchObject({ code: "invalid_subscribe", message: expect.stringContaining("local") });
    const acknowledged = await client.subscribe({});
    expect(acknowledged.type).toBe("subscribed");
    client.close();
  } finally {
    await local.stop();
  }
});

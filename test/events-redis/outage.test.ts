import { Redis } from "ioredis";
import { afterAll, beforeAll, expect } from "vitest";
import type { TestGateway } from "../support/gateway.js";
import { captureLog, type CapturedLog } from "../support/captured-log.js";
import { loadEventValidators, schemaProblems } from "../events/event-schemas.js";
import { openEvents, until, type EventClient } from "../events/ws-client.js";
import { metricValue, startRedisGateway, streamedTurn } from "./redis-gateways.js";
import { redisServerInstalled, startOwnRedisServer, type OwnRedisServer } from "./own-redis-server.js";
import { testRedis } from "./redis-for-tests.js";

// these tests stop and start a Redis server: one of their own, never the shared one
const installed = redisServerInstalled();
const redis = await testRedis(
  "test/events-redis/outage.test.ts",
  undefined,
  installed ? undefined : "redis-server is not installed (the outage tests start and stop one of their own)",
);
const validators = loadEventValidators();
let server: OwnRedisServer;
let a: TestGateway;
let b: TestGateway;
let aLog: CapturedLog;
beforeAll(async () => {
  if (!redis.available) return;
  server = await startOwnRedisServer();
  aLog = captureLog();
  a = await startRedisGateway(server.url, redis.stream("outage"), {}, aLog.logger);
  b = await startRedisGateway(server.url, redis.stream("outage"));
});
afterAll(async () => {
  await a?.stop();
  await b?.stop();
  await server?.stop();
});

/** Streamed turns on `gateway`, `concurrency` at a time, until `stop()`; every result and duration is kept. */
function load(gateway: TestGateway, concurrency: number, prefix: string) {
  const results: { status: number; done: boolean; ms: number; startedAt: number }[] = [];
  let running = true;
  const worker = async (index: number) => {
    for (let turn = 0; running; turn++) {
      const startedAt = performance.now();
      const result = await streamedTurn(gateway, `${prefix}-${index}`);
      results.push({ ...result, ms: performance.now() - startedAt, startedAt });
    }
  };
  const workers = Array.from({ length: concurrency }, (_, index) => worker(index));
  return {
    results,
    async stop() {
      running = false;
      await Promise.all(workers);
      return results;
    },
  };
}

const health = async (gateway: TestGateway) =>
  (await (await gateway.fetch("/health")).json()) as { status: string; events: { status: string; reason?: string } };
const completedAfter = (client: EventClient, index: number) => client.messages.slice(index + 1).some((message) => message.type === "turn.completed");

redis.test(
  "Redis stopped mid-load: requests keep succeeding, drops are counted and logged once, /health says degraded, and delivery resumes with a gap notice when it is back",
  async () => {
    const watcher = await openEvents(b);
    await watcher.subscribe();
    const running = load(a, 4, "outage");
    await watcher.waitFor((message) => message.type === "turn.completed");
    const warningsBefore = aLog.lines.filter((line) => line.level === "warn").length;

    await server.stop();
    await until(async () => (await metricValue(a, "carrierd_events_dropped_total", 'reason="disconnected"')) > 0, 10_000);
    const degraded = await health(a);
    expect(degraded).toMatchObject({ status: "ok", events: { status: "degraded", reason: expect.stringContaining("cannot write events to Redis") } });
    await until(async () => (await health(b)).events.status === "degraded", 10_000);
    const duringOutage = running.results.length;
    await until(() => running.results.length >= duringOutage + 8, 10_000);

    await server.start();
    await until(async () => (await health(a)).events.status === "ok" && (await health(b)).events.status === "ok", 15_000);
    const gap = await watcher.waitFor((message) => message.type === "gap" && message.reason === "dropped", 10_000);
    expect(schemaProblems(validators, gap)).toEqual([]);
    expect(gap.count).toBeGreaterThan(0);
    // delivery resumed: whole turns arrive after the notice
    await watcher.waitFor(() => completedAfter(watcher, watcher.messages.indexOf(gap)), 10_000);
    const results = await running.stop();

    expect(results.length).toBeGreaterThan(duringOutage);
    expect(results.filter((result) => result.status !== 200 || !result.done)).toEqual([]);
    const dropped =
      (await metricValue(a, "carrierd_events_dropped_total", 'reason="disconnected"')) +
      (await metricValue(a, "carrierd_events_dropped_total", 'reason="write_failed"'));
    expect(dropped).toBeGreaterThanOrEqual(gap.count as number);
    // one line when writes stopped working, one when they worked again: not one per event
    const outageLines = aLog.lines.filter((line) => /cannot write to the Redis stream/.test(line.message));
    expect(outageLines).toHaveLength(1);
    expect(aLog.lines.filter((line) => line.level === "warn").length - warningsBefore).toBeLessThanOrEqual(2);
    expect(aLog.lines.filter((line) => /writing to the Redis stream again/.test(line.message))).toHaveLength(1);
    watcher.close();
  },
  60_000,
);

redis.test(
  "a Redis that stops answering (DEBUG SLEEP) does not slow requests: the bounded queue drops and counts instead",
  async () => {
    // a small queue, so that two seconds of a silent Redis fill it
    const small = await startRedisGateway(server.url, redis.stream("outage"), { CARRIERD_EVENTS_QUEUE: "200" });
    const blocking = new Redis(server.url);
    try {
      await blocking.ping();
      const running = load(small, 4, "slow");
      await until(() => running.results.length >= 4);
      const sleepStarted = performance.now();
      await blocking.call("DEBUG", "SLEEP", "2");
      const sleepEnded = performance.now();
      const results = await running.stop();
      // requests that began and ended while Redis was asleep: none of them can have waited on it
      const during = results.filter((result) => result.startedAt >= sleepStarted && result.startedAt + result.ms <= sleepEnded);
      expect(during.length).toBeGreaterThan(4);
      expect(results.filter((result) => result.status !== 200 || !result.done)).toEqual([]);
      expect(await metricValue(small, "carrierd_events_dropped_total", 'reason="queue_full"')).toBeGreaterThan(0);
    } finally {
      blocking.disconnect();
      await small.stop();
    }
  },
  60_000,
);

redis.test(
  "a gateway started while Redis is down serves at once, says events are degraded, and shares events once Redis is up",
  async () => {
    await server.stop();
    let late: TestGateway | undefined;
    try {
      late = await startRedisGateway(server.url, redis.stream("outage"));
      expect(await streamedTurn(late, "late-start")).toEqual({ status: 200, done: true });
      expect((await health(late)).events).toMatchObject({ backend: "redis", status: "degraded" });
      await server.start();
      await until(async () => (await health(late!)).events.status === "ok" && (await health(b)).events.status === "ok", 15_000);
      const watcher = await openEvents(b);
      await watcher.subscribe({ sessions: ["late-start"] });
      await streamedTurn(late, "late-start");
      await watcher.waitFor((message) => message.type === "turn.completed");
      watcher.close();
    } finally {
      await late?.stop();
    }
  },
  60_000,
);

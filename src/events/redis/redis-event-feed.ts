import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import type { EventsSetting } from "../../foundation/config/events-setting.js";
import type { EventBus } from "../../foundation/event-bus/event-bus.js";
import type { EventFeed, FeedHealth } from "../event-feed.js";
import type { Logger } from "../../foundation/logging/logger.js";
import { registerSecret } from "../../foundation/logging/redact.js";
import { StreamPublisher } from "./stream-publisher.js";
import { StreamReader } from "./stream-reader.js";
import { replayAfter } from "./stream-replay.js";

type RedisSetting = Extract<EventsSetting, { backend: "redis" }>;

/** Longest pause between two reconnection attempts: events are back within this of Redis. */
const RECONNECT_MAX_MS = 2000;
/** How long a start waits for Redis before going on without it. */
const START_WAIT_MS = 2000;

/**
 * events: redis. Every instance writes its bus to one Redis Stream and its
 * hub reads only from that stream, so every subscriber, on any instance, sees
 * one order with ids it can resume from. Two connections: one for writes and
 * resumes, one for the blocking read. Neither is ever awaited by a request:
 * when Redis is unreachable the gateway serves as before, events are dropped
 * and counted, and `/health` says `degraded` for events until both
 * connections work again (ioredis reconnects by itself). Resolves once the
 * reader stands at the stream's end, or after START_WAIT_MS without Redis.
 */
export async function openRedisFeed(setting: RedisSetting, bus: EventBus, log: Logger): Promise<EventFeed> {
  const url = new URL(setting.url);
  registerSecret(url.password ? decodeURIComponent(url.password) : undefined);
  const connect = (role: string) => {
    // commands fail at once while disconnected (no offline queue): the publisher drops and counts instead of piling up;
    // reconnecting never stops, its pause doubling from 50 ms to at most RECONNECT_MAX_MS
    const redis = new Redis(setting.url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectionName: `carrierd-events-${role}`,
      retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times - 1, 10), RECONNECT_MAX_MS),
    });
    redis.on("error", (error: Error) => log.debug({ err: error, role }, "events: Redis connection error"));
    return redis;
  };
  const writer = connect("writer");
  const readerConnection = connect("reader");
  const instance = `${hostname()}/${process.pid}/${randomBytes(3).toString("hex")}`;
  const publisher = new StreamPublisher(writer, bus, { stream: setting.stream, maxLength: setting.maxLength, queueLimit: setting.queueLimit, instance }, log);
  const reader = new StreamReader(readerConnection, setting.stream, log);
  reader.start();
  // what this gateway publishes once it listens must reach its subscribers: the reader first finds the stream's end;
  // a Redis that is down at start does not hold the start up (events are degraded until it is back)
  let waited: NodeJS.Timeout | undefined;
  await Promise.race([reader.started, new Promise<void>((resolve) => (waited = setTimeout(resolve, START_WAIT_MS)))]);
  clearTimeout(waited);
  log.info(
    { events: setting.displayUrl, stream: setting.stream, max_length: setting.maxLength, instance },
    `events: shared through the Redis stream ${setting.stream} at ${setting.displayUrl}`,
  );

  return {
    listen: (listener) => reader.listen(listener),
    replay: (lastId, sink) => replayAfter(writer, setting.stream, lastId, sink),
    health(): FeedHealth {
      if (writer.status !== "ready")
        return { backend: "redis", status: "degraded", reason: `cannot write events to Redis (connection ${writer.status}); they are dropped and counted` };
      if (!reader.healthy)
        return {
          backend: "redis",
          status: "degraded",
          reason: `cannot read the event stream (connection ${readerConnection.status}); subscribers here get no events until it is back`,
        };
      if (!publisher.writing) return { backend: "redis", status: "degraded", reason: "events are being dropped: Redis does not keep up with the writes" };
      return { backend: "redis", status: "ok" };
    },
    dropped: () => publisher.dropped,
    describe: () => ({ backend: "redis", url: setting.displayUrl, stream: setting.stream, max_length: setting.maxLength }),
    async close() {
      publisher.close();
      reader.stop();
      // a last pipeline may still be on its way; quit waits for its replies, disconnect is the fallback
      await writer.quit().catch(() => writer.disconnect());
    },
  };
}

import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, test } from "vitest";

/** The Redis the suite talks to: CARRIERD_TEST_REDIS_URL, else the local service on its standard port. */
export const REDIS_URL = process.env.CARRIERD_TEST_REDIS_URL || "redis://127.0.0.1:6379";

const HOW_TO_START =
  "start one with `redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save '' --appendonly no`, or point CARRIERD_TEST_REDIS_URL at one";

async function reachable(url: string): Promise<string | undefined> {
  const redis = new Redis(url, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 2000 });
  redis.on("error", () => undefined);
  try {
    await redis.connect();
    await redis.ping();
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    redis.disconnect();
  }
}

export interface TestRedis {
  readonly available: boolean;
  /** This run's own key prefix: nothing else on the server is read or deleted. */
  readonly prefix: string;
  /** A stream key of this run. */
  stream(name: string): string;
  /** A client on the test server (for checks; closed after the file). */
  client(): Redis;
  /** `test`, skipped (and counted, and said loudly) when there is no Redis; a failure under CI=true. */
  readonly test: (name: string, body: () => Promise<void>, timeout?: number) => void;
}

/**
 * Connects to the test Redis once per file. Under CI a missing server fails
 * the file with how to start one; elsewhere the file's tests are skipped and
 * the run says how many and why. `precondition` is another reason the file
 * cannot run (a missing redis-server binary), treated the same way.
 */
export async function testRedis(file: string, url = REDIS_URL, precondition?: string): Promise<TestRedis> {
  const problem = precondition ?? (await reachable(url));
  if (problem && process.env.CI === "true")
    throw new Error(`Redis is not usable at ${url} (${problem}); the Redis suites need a real server under CI: ${HOW_TO_START}`);
  const prefix = `carrierd-test:${process.pid}-${randomBytes(4).toString("hex")}`;
  const clients: Redis[] = [];
  let skipped = 0;
  afterAll(async () => {
    if (problem && skipped > 0) {
      console.warn(`\n*** SKIPPED ${skipped} Redis test(s) in ${file}: no Redis at ${url} (${problem}). To run them, ${HOW_TO_START}. ***\n`);
    }
    if (problem) return;
    const cleaner = new Redis(url);
    let cursor = "0";
    do {
      const [next, keys] = await cleaner.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
      if (keys.length > 0) await cleaner.del(...keys);
      cursor = next;
    } while (cursor !== "0");
    cleaner.disconnect();
    for (const client of clients) client.disconnect();
  });
  return {
    available: problem === undefined,
    prefix,
    stream: (name) => `${prefix}:${name}`,
    client() {
      const client = new Redis(url);
      clients.push(client);
      return client;
    },
    test(name, body, timeout) {
      if (problem) {
        skipped++;
        test.skip(name, body);
      } else test(name, body, timeout);
    },
  };
}

import "reflect-metadata";
import { EventEmitter, once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, test } from "vitest";
import { captureLog, type CapturedLog } from "../support/captured-log.js";
import { startTestGateway, TEST_KEY, type TestGateway } from "../support/gateway.js";

// An upstream that takes its time before answering: the client gives up first.
let upstream: Server;
let upstreamClosed: Promise<unknown>;
/** Emits "request" when a request reaches the upstream. */
const upstreamEvents = new EventEmitter();
let gateway: TestGateway;
let log: CapturedLog;

beforeAll(async () => {
  upstream = createServer((request) => {
    upstreamClosed = once(request.socket, "close");
    upstreamEvents.emit("request");
    request.resume(); // and never answer
  });
  upstream.listen(0, "127.0.0.1");
  await once(upstream, "listening");
  const port = (upstream.address() as AddressInfo).port;
  log = captureLog();
  gateway = await startTestGateway({
    routes: `version: 1
providers:
  slow: { plugin: openai-compatible, base_url: "http://127.0.0.1:${port}/v1" }
models:
  - { name: slow, provider: slow }
`,
    log: log.logger,
  });
});
afterAll(async () => {
  await gateway.stop();
  upstream.closeAllConnections();
  upstream.close();
});

test.each([false, true])(
  "a client that leaves before the upstream answers cancels the upstream call, and nothing is logged as a failure (stream: %s)",
  async (stream) => {
    const reached = once(upstreamEvents, "request");
    const client = new AbortController();
    const pending = fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "slow", stream, messages: [{ role: "user", content: "take your time" }] }),
      signal: client.signal,
    });
    await reached; // the gateway is waiting for the upstream's answer
    const closed = upstreamClosed;
    client.abort();
    await expect(pending).rejects.toThrow();
    await closed; // the gateway hung up on the upstream: no answer nobody waits for is paid for
    expect((await fetch(`${gateway.url}/health`)).status).toBe(200);
    expect(log.lines.filter((line) => line.level === "error" || line.level === "warn")).toEqual([]);
  },
);

import "reflect-metadata";
import { afterAll, beforeAll, expect, test } from "vitest";
import { captureLog, type CapturedLog } from "../support/captured-log.js";
import { startFaultInjector, type FaultInjector } from "../support/fault-injector.js";
import { startTestGateway, TEST_KEY, type TestGateway } from "../support/gateway.js";

// An upstream that takes its time before answering (the fault injector's `stall`): the client gives up first.
let upstream: FaultInjector;
let gateway: TestGateway;
let log: CapturedLog;

beforeAll(async () => {
  upstream = await startFaultInjector();
  log = captureLog();
  gateway = await startTestGateway({
    routes: `version: 1
providers:
  slow: { plugin: openai-compatible, base_url: "${upstream.baseUrl()}" }
models:
  - { name: slow, provider: slow, model: stall }
`,
    log: log.logger,
  });
});
afterAll(async () => {
  await gateway.stop();
  await upstream.close();
});

test.each([false, true])(
  "a client that leaves before the upstream answers cancels the upstream call, and nothing is logged as a failure (stream: %s)",
  async (stream) => {
    const reached = upstream.next("stall");
    const client = new AbortController();
    const pending = fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "slow", stream, messages: [{ role: "user", content: "take your time" }] }),
      signal: client.signal,
    });
    const { closed } = await reached; // the gateway is waiting for the upstream's answer
    client.abort();
    await expect(pending).rejects.toThrow();
    await closed; // the gateway hung up on the upstream: no answer nobody waits for is paid for
    expect((await fetch(`${gateway.url}/health`)).status).toBe(200);
    expect(log.lines.filter((line) => line.level === "error" || line.level === "warn")).toEqual([]);
  },
);

import "reflect-metadata";
import { afterAll, beforeAll, expect, test } from "vitest";
import { startFaultInjector, type FaultInjector } from "../support/fault-injector.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";

// An upstream whose answers start with a UTF-8 byte order mark (the fault injector's `bom`).
// undici's `body.text()` and TextDecoder both drop it; the transport must too.
let upstream: FaultInjector;
let gateway: TestGateway;

beforeAll(async () => {
  upstream = await startFaultInjector();
  gateway = await startTestGateway({
    routes: `version: 1
providers:
  bom: { plugin: openai-compatible, base_url: "${upstream.baseUrl()}" }
models:
  - { name: bom, provider: bom, model: bom }
`,
  });
});
afterAll(async () => {
  await gateway.stop();
  await upstream.close();
});

test("a whole JSON answer that starts with a byte order mark is read, not refused as not JSON", async () => {
  const response = await gateway.post("/v1/chat/completions", { model: "bom", messages: [{ role: "user", content: "hi" }] });
  const body = (await response.json()) as { choices?: { message: { content: string } }[]; error?: unknown };
  expect(response.status, JSON.stringify(body)).toBe(200);
  expect(body.choices?.[0]?.message.content).toBe("Hello world");
});

test("a stream that starts with a byte order mark keeps its first event", async () => {
  const response = await gateway.post("/v1/chat/completions", { model: "bom", stream: true, messages: [{ role: "user", content: "hi" }] });
  expect(response.status).toBe(200);
  const text = await response.text();
  const content = text
    .split("\n\n")
    .filter((event) => event.startsWith("data: {"))
    .map((event) => JSON.parse(event.slice(6)) as { choices?: { delta?: { content?: string } }[] })
    .map((event) => event.choices?.[0]?.delta?.content ?? "")
    .join("");
  expect(content).toBe("Hello world");
});

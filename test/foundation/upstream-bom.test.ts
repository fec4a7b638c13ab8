import "reflect-metadata";
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, test } from "vitest";
import { startTestGateway, type TestGateway } from "../support/gateway.js";

// An upstream whose answers start with a UTF-8 byte order mark (some .NET and Windows-hosted servers send one).
// undici's `body.text()` and TextDecoder both drop it; the transport must too.
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
let upstream: Server;
let gateway: TestGateway;

const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: "chatcmpl-bom", object: "chat.completion.chunk", created: 1, model: "bom-model", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

beforeAll(async () => {
  upstream = createServer((request, response) => {
    let raw = "";
    request.on("data", (data: Buffer) => (raw += data));
    request.on("end", () => {
      const body = JSON.parse(raw) as { stream?: boolean };
      if (body.stream) {
        response.writeHead(200, { "content-type": "text/event-stream" });
        // the mark arrives on its own, split from the first event, as a network read may deliver it
        response.write(BOM.subarray(0, 2));
        setTimeout(() => {
          response.write(Buffer.concat([BOM.subarray(2), Buffer.from(chunk({ role: "assistant", content: "Hello" }))]));
          response.end(chunk({ content: " world" }, "stop") + "data: [DONE]\n\n");
        }, 20);
        return;
      }
      const answer = {
        id: "chatcmpl-bom",
        object: "chat.completion",
        created: 1,
        model: "bom-model",
        choices: [{ index: 0, message: { role: "assistant", content: "Hello world" }, finish_reason: "stop" }],
      };
      response.writeHead(200, { "content-type": "application/json; charset=utf-8" });
      response.end(Buffer.concat([BOM, Buffer.from(JSON.stringify(answer))]));
    });
  });
  upstream.listen(0, "127.0.0.1");
  await once(upstream, "listening");
  const port = (upstream.address() as AddressInfo).port;
  gateway = await startTestGateway({
    routes: `version: 1
providers:
  bom: { plugin: openai-compatible, base_url: "http://127.0.0.1:${port}/v1" }
models:
  - { name: bom, provider: bom }
`,
  });
});
afterAll(async () => {
  await gateway.stop();
  upstream.closeAllConnections();
  upstream.close();
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

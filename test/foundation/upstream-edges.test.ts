import "reflect-metadata";
import { EventEmitter, once } from "node:events";
import { createServer, type ServerResponse, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, test } from "vitest";
import { captureLog, type CapturedLog } from "../support/captured-log.js";
import { startTestGateway, TEST_KEY, type TestGateway } from "../support/gateway.js";

// Upstreams that answer partly then hold, break, or report an error mid-stream.
let upstream: Server;
let gateway: TestGateway;
let log: CapturedLog;
let lastClosed: Promise<unknown> = Promise.resolve();
let sockets = 0;
const closes = new WeakMap<object, Promise<unknown>>();
/** Emits a model's name once the upstream has sent what it sends for it (for answers it then holds). */
const served = new EventEmitter();

const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: "chatcmpl-x", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

beforeAll(async () => {
  upstream = createServer((request, response: ServerResponse) => {
    let closed = closes.get(request.socket);
    if (!closed) closes.set(request.socket, (closed = once(request.socket, "close")));
    lastClosed = closed;
    let raw = "";
    request.on("data", (data: Buffer) => (raw += data));
    request.on("end", () => {
      const body = JSON.parse(raw) as { model: string; stream?: boolean };
      switch (body.model) {
        case "hold-stream":
          response.writeHead(200, { "content-type": "text/event-stream" });
          response.write(chunk({ role: "assistant", content: "partial" }));
          return; // and never more
        case "hold-whole":
          response.writeHead(200, { "content-type": "application/json", "content-length": "1000" });
          response.write('{"id":', () => served.emit("hold-whole"));
          return;
        case "break-stream":
          response.writeHead(200, { "content-type": "text/event-stream" });
          response.write(chunk({ role: "assistant", content: "partial" }));
          setTimeout(() => request.socket.destroy(), 30);
          return;
        case "error-stream":
          response.writeHead(200, { "content-type": "text/event-stream" });
          response.write(chunk({ role: "assistant", content: "partial" }) + `data: {"error":{"message":"overloaded","code":502}}\n\n`);
          return; // holds the socket: the gateway must hang up itself
        case "not-json":
          response.writeHead(200, { "content-type": "text/html" });
          response.end("<html>gateway timeout</html>");
          return;
        case "cut-whole":
          response.writeHead(200, { "content-type": "application/json", "content-length": "1000" });
          response.write('{"id":');
          setTimeout(() => request.socket.destroy(), 30);
          return;
        case "ok":
        default:
          if (!body.stream) {
            response.writeHead(200, { "content-type": "application/json" });
            response.end(
              JSON.stringify({
                id: "chatcmpl-x",
                object: "chat.completion",
                created: 1,
                model: "m",
                choices: [{ index: 0, message: { role: "assistant", content: "fine" }, finish_reason: "stop" }],
              }),
            );
            return;
          }
          response.writeHead(200, { "content-type": "text/event-stream" });
          response.end(chunk({ role: "assistant", content: "fine" }, "stop") + "data: [DONE]\n\n");
      }
    });
  });
  upstream.on("connection", () => sockets++);
  upstream.listen(0, "127.0.0.1");
  await once(upstream, "listening");
  const port = (upstream.address() as AddressInfo).port;
  log = captureLog();
  gateway = await startTestGateway({
    routes: `version: 1
providers:
  up: { plugin: openai-compatible, base_url: "http://127.0.0.1:${port}/v1" }
models:
  - { name: "*", provider: up }
`,
    log: log.logger,
  });
});
afterAll(async () => {
  await gateway.stop();
  upstream.closeAllConnections();
  upstream.close();
});

const post = (model: string, stream: boolean, signal?: AbortSignal) =>
  fetch(`${gateway.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ model, stream, messages: [{ role: "user", content: "hi" }] }),
    signal,
  });

test("a client that leaves mid-stream cancels the upstream", async () => {
  const client = new AbortController();
  const response = await post("hold-stream", true, client.signal);
  const reader = response.body!.getReader();
  const first = new TextDecoder().decode((await reader.read()).value);
  expect(first).toContain("data:");
  const closed = lastClosed;
  client.abort();
  await closed;
  expect((await fetch(`${gateway.url}/health`)).status).toBe(200);
  expect(log.lines.filter((line) => line.level === "error")).toEqual([]);
});

test("a client that leaves while a whole answer is half read cancels the upstream", async () => {
  const client = new AbortController();
  const halfServed = once(served, "hold-whole");
  const pending = post("hold-whole", false, client.signal);
  await halfServed; // the upstream sent the first bytes of its answer and holds the rest
  const closed = lastClosed;
  client.abort();
  await expect(pending).rejects.toThrow();
  await closed;
  expect(log.lines.filter((line) => line.level === "error")).toEqual([]);
});

test("an upstream that breaks mid-stream ends the client's stream with an error event", async () => {
  const response = await post("break-stream", true);
  const text = await response.text();
  expect(text).toContain("partial");
  expect(text).toContain('"error"');
  expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
  expect(log.lines.filter((line) => line.level === "error")).toEqual([]);
});

test("an error chunk mid-stream is relayed and the gateway hangs up on the upstream", async () => {
  const response = await post("error-stream", true);
  const closed = lastClosed;
  const text = await response.text();
  expect(text).toContain("partial");
  expect(text).toContain("overloaded");
  await closed;
  expect(log.lines.filter((line) => line.level === "error")).toEqual([]);
});

test("streamed and whole answers reuse the upstream connection", async () => {
  for (let i = 0; i < 3; i++) await (await post("ok", true)).text();
  const before = sockets;
  for (let i = 0; i < 5; i++) expect(await (await post("ok", true)).text()).toContain("fine");
  for (let i = 0; i < 5; i++) expect((await post("ok", false)).status).toBe(200);
  expect(sockets - before).toBe(0);
});

test.each(["not-json", "cut-whole"])("a whole answer that is %s is an OpenAI-shaped 502", async (model) => {
  const response = await post(model, false);
  const body = (await response.json()) as { error?: { message: string } };
  expect(response.status, JSON.stringify(body)).toBe(502);
  expect(body.error?.message).toBeTruthy();
  expect(log.lines.filter((line) => line.level === "error")).toEqual([]);
});

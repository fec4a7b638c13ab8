import { once } from "node:events";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import { dataFrame, SseWriter } from "../../src/ingress/sse.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { startOpenAIUpstream, type OpenAIUpstream } from "../support/openai-upstream.js";

/** The exact bytes a client reads of a carried chat stream: the upstream's, split surrogates and all, nothing shifted or re-encoded. */
describe("a streamed chat completion, byte for byte", () => {
  const upstreamChunk = (delta: object, finish: string | null = null) =>
    JSON.stringify({ id: "up-1", object: "chat.completion.chunk", created: 1, model: "up", choices: [{ index: 0, delta, finish_reason: finish }] });
  const thought = 'Think 🤔 about 漢字, "quotes", a back\\slash, a\nnewline, a\ttab, \u0001, \u2028 and é';
  const UPSTREAM = [
    upstreamChunk({ role: "assistant", content: null, reasoning_content: "" }),
    upstreamChunk({ reasoning_content: thought }),
    // an emoji whose halves arrive in two parts: each half is its own (escaped) JSON string
    upstreamChunk({ reasoning_content: "\ud83d" }),
    upstreamChunk({ reasoning_content: "\ude00 done" }),
    upstreamChunk({ content: "Answer: 😀 日本語 ÿ" }),
    upstreamChunk({ tool_calls: [{ index: 3, id: "call_1", type: "function", function: { name: "lookup", arguments: "" } }] }),
    upstreamChunk({ tool_calls: [{ index: 3, function: { arguments: '{"q":"é😀"}' } }] }),
    upstreamChunk({}, "tool_calls"),
    JSON.stringify({
      id: "up-1",
      object: "chat.completion.chunk",
      created: 1,
      model: "up",
      choices: [],
      usage: { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 },
    }),
  ];

  let upstream: OpenAIUpstream;
  let gateway: TestGateway;
  beforeAll(async () => {
    upstream = await startOpenAIUpstream({ answers: { kind: "replay", models: { unicode: { chunks: UPSTREAM } } } });
    gateway = await startTestGateway({
      routes: `version: 1
providers:
  recorded: { plugin: openai-compatible, base_url: "${upstream.baseUrl("openai")}" }
models:
  - { name: "rec/*", provider: recorded }
`,
    });
  });
  afterAll(async () => {
    await gateway.stop();
    await upstream.close();
  });

  test("reasoning, multi-byte text, split surrogates and a tool call arrive as exactly these bytes", async () => {
    const response = await gateway.post("/v1/chat/completions", {
      model: "rec/unicode",
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: "user", content: "hi" }],
    });
    expect(response.status).toBe(200);
    const bytes = Buffer.from(await response.arrayBuffer());
    // carried (the route's upstream speaks chat completions): the upstream's frames reach the client as they were sent
    const expected = [...UPSTREAM.map((line) => `data: ${line}\n\n`), "data: [DONE]\n\n"].join("");
    expect(bytes.toString("utf8")).toBe(expected); // (a readable diff when it fails)
    expect(bytes.equals(Buffer.from(expected, "utf8"))).toBe(true);
  });
});

describe("SseWriter", () => {
  let url: string;
  let opened: ((response: ServerResponse) => void) | undefined;
  const server = createServer((_request, response) => opened?.(response));
  beforeAll(async () => {
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  /** A request to the test server, and the server's side of it. */
  async function open(): Promise<{ client: Promise<Response>; abort: AbortController; response: ServerResponse }> {
    const abort = new AbortController();
    const serverSide = new Promise<ServerResponse>((resolve) => (opened = resolve));
    const client = fetch(url, { signal: abort.signal });
    return { client, abort, response: await serverSide };
  }

  const nextPass = () => new Promise<void>((resolve) => setImmediate(resolve));

  test("the events of one pass leave in one write of one Buffer, the head with them; the next pass is the next write", async () => {
    const { client, response } = await open();
    const write = vi.spyOn(response, "write");
    const flushHeaders = vi.spyOn(response, "flushHeaders");
    const writer = new SseWriter(response, {}, 60);
    const frame = dataFrame('{"delta":', "}");
    writer.data('{"n":1}');
    for (const text of ["a", "😀", "漢字", "x".repeat(5000)]) writer.dataInFrame(frame, JSON.stringify(text)); // > 4 KB: past Node's Buffer pool
    writer.data('{"n":2}', "named");
    await nextPass();
    expect(flushHeaders).not.toHaveBeenCalled(); // the head waited for the first event
    expect(write).toHaveBeenCalledTimes(1);
    const first = write.mock.calls[0]![0];
    expect(Buffer.isBuffer(first)).toBe(true);
    const firstPass = `data: {"n":1}\n\ndata: {"delta":"a"}\n\ndata: {"delta":"😀"}\n\ndata: {"delta":"漢字"}\n\ndata: {"delta":"${"x".repeat(5000)}"}\n\nevent: named\ndata: {"n":2}\n\n`;
    expect((first as Buffer).toString("utf8")).toBe(firstPass);
    writer.dataInFrame(frame, '"b"');
    await nextPass();
    expect(write).toHaveBeenCalledTimes(2);
    expect((write.mock.calls[1]![0] as Buffer).toString("utf8")).toBe('data: {"delta":"b"}\n\n');
    writer.dataInFrame(frame, '"c"');
    writer.end("data: [DONE]\n\n"); // what is pending leaves with the end, in one piece
    expect(write).toHaveBeenCalledTimes(2);
    expect(await (await client).text()).toBe(`${firstPass}data: {"delta":"b"}\n\ndata: {"delta":"c"}\n\ndata: [DONE]\n\n`);
  });

  test("with no event in the first pass the head leaves on its own at once", async () => {
    const { client, response } = await open();
    const flushHeaders = vi.spyOn(response, "flushHeaders");
    const writer = new SseWriter(response, { "x-session-id": "s2" }, 60);
    const answered = await client; // fetch resolves on the head alone
    expect(flushHeaders).toHaveBeenCalledTimes(1);
    expect(answered.headers.get("x-session-id")).toBe("s2");
    writer.end();
    expect(await answered.text()).toBe("");
  });

  test("nothing is written once the client has gone", async () => {
    const { client, abort, response } = await open();
    const writer = new SseWriter(response, {}, 0.1);
    writer.data('{"n":1}');
    await nextPass();
    await client;
    const write = vi.spyOn(response, "write");
    const end = vi.spyOn(response, "end");
    abort.abort();
    await once(response, "close");
    writer.data('{"n":2}');
    writer.dataInFrame(dataFrame("[", "]"), "3");
    writer.data('{"n":4}', "late");
    expect(writer.keepalive(Date.now() + 60_000)).toBe(false);
    await nextPass();
    expect(write).not.toHaveBeenCalled();
    writer.end("data: [DONE]\n\n");
    expect(end).not.toHaveBeenCalled();
  });

  test("a pass pending when the response is destroyed is dropped, not written", async () => {
    const { client, response } = await open();
    const writer = new SseWriter(response, {}, 60);
    const write = vi.spyOn(response, "write");
    writer.data('{"n":1}');
    response.destroy();
    await nextPass();
    expect(write).not.toHaveBeenCalled();
    await expect(client).rejects.toThrow(); // the head never left either
  });

  test("a frame's constant JSON cannot carry CR or LF into the framing", () => {
    expect(() => dataFrame('{"a":\n', "}")).toThrow(/CR or LF/);
    expect(() => dataFrame('{"a":', "}\r")).toThrow(/CR or LF/);
  });
});

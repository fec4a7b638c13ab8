import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { readFixture } from "../../support/fixtures-dir.js";
import { readSse, startTestGateway, storageOf, type TestGateway } from "../../support/gateway.js";
import { RATE_LIMIT_ERROR, startOpenAIResponsesUpstream, type ResponsesUpstream } from "../../support/openai-responses-upstream.js";
import { kept, toolOutputs, userMessage, type Item } from "../../support/codex-client.js";

/**
 * The carried path on the Responses door (docs/api.md#carried-requests): a
 * Responses API client on an `openai-responses` route is carried, not
 * rebuilt. The upstream receives the client's bytes, changed only where
 * carrierd must (the model the route maps; reasoning items replay puts back
 * or takes off), and the client receives the upstream's answer as it was
 * sent, frame by frame. Between carrierd and the emulator a recording proxy
 * keeps each answer's bytes and can hold a stream before its end.
 */
const KEY = "sk-openai-test";
const TOOL = { type: "function", name: "weather", parameters: { type: "object", properties: { location: { type: "string" } } } };

let upstream: ResponsesUpstream;
let gateway: TestGateway;
let proxy: Server;
/** Each answer the proxy relayed, as the upstream sent it. */
const answers: string[] = [];
/** Armed: the next stream is held before `response.completed` until the gate opens; when its first text delta went out. */
let hold: { gate: Promise<void>; open: () => void; firstTextAt?: number; holding: boolean } | undefined;

beforeAll(async () => {
  upstream = await startOpenAIResponsesUpstream({ apiKey: KEY });
  const target = new URL(upstream.url);
  proxy = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
    incoming.on("end", () => {
      const forward = httpRequest(
        { host: target.hostname, port: target.port, path: incoming.url, method: incoming.method, headers: incoming.headers },
        (answer) => {
          const body: Buffer[] = [];
          answer.on("data", (chunk: Buffer) => body.push(chunk));
          answer.on("end", () => void relay(outgoing, answer.statusCode ?? 502, answer.headers, Buffer.concat(body).toString("utf8")));
        },
      );
      forward.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  gateway = await startTestGateway({
    routes: `version: 1
providers:
  openai: { plugin: openai-responses, base_url: ${proxyUrl}/v1, api_key_env: OPENAI_API_KEY }
models:
  - { name: demo, provider: openai, model: gpt-5-codex }
  - { name: gpt-5, provider: openai, model: gpt-5 }
  - { name: gpt-5-busy, provider: openai, model: gpt-5-busy }
carriers:
  - match: { plugin: openai-responses }
    fields: []
`,
    env: { OPENAI_API_KEY: KEY },
  });
});
afterAll(async () => {
  hold?.open();
  await gateway?.stop();
  proxy?.closeAllConnections();
  await new Promise<void>((resolve) => (proxy ? proxy.close(() => resolve()) : resolve()));
  await upstream?.close();
});

/** The upstream's answer to carrierd, event by event; an armed hold keeps `response.completed` back until its gate opens. */
async function relay(outgoing: import("node:http").ServerResponse, status: number, headers: import("node:http").IncomingHttpHeaders, text: string) {
  answers.push(text);
  outgoing.writeHead(status, headers);
  const held = hold;
  if (!held || !text.startsWith("event:")) return void outgoing.end(text);
  hold = undefined;
  for (const event of text.split(/(?<=\n\n)/)) {
    if (event.startsWith("event: response.completed")) {
      held.holding = true;
      await held.gate;
      held.holding = false;
    }
    outgoing.write(event);
    if (held.firstTextAt === undefined && event.startsWith("event: response.output_text.delta")) held.firstTextAt = performance.now();
  }
  outgoing.end();
}

function post(body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${gateway.url}/v1/responses`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${gateway.key}`, ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** The upstream's body as carrierd sent it, as text. */
function lastUpstreamText(): string {
  return upstream.received.at(-1)!.raw.toString("utf8");
}

const codexFirst = JSON.parse(readFixture("clients/codex-0.171.0-default-responses-req.json")) as {
  headers: Record<string, string>;
  body: Record<string, unknown> & { model: string };
};

describe("Codex's first request on a Responses route: the upstream gets the client's bytes", () => {
  for (const indent of [0, 2]) {
    test(`byte for byte but the model${indent ? ", pretty-printed" : ""}; the answer as the upstream streamed it`, async () => {
      const text = JSON.stringify(codexFirst.body, null, indent);
      const response = await post(text, { "openai-beta": "responses=experimental", "session-id": codexFirst.headers["session-id"]! });
      const answer = await response.text();
      expect(response.status, answer).toBe(200);
      const modelMember = (model: string) => JSON.stringify({ model }, null, indent).slice(indent ? 4 : 1, -(indent ? 2 : 1));
      expect(lastUpstreamText()).toBe(text.replace(modelMember("demo"), modelMember("gpt-5-codex")));
      const received = upstream.received.at(-1)!;
      expect(received.headers["openai-beta"]).toBe("responses=experimental");
      expect(received.headers.authorization).toBe(`Bearer ${KEY}`);
      // every frame as the upstream sent it; carrierd adds only its session header
      expect(answer).toBe(answers.at(-1));
      expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
      expect(response.headers.get("x-session-id")).toBe(codexFirst.headers["session-id"]);
    });
  }
});

test("fields the translated path drops or rewrites go as sent; carrierd's own model_options does not", async () => {
  const body = {
    model: "gpt-5",
    input: [{ role: "user", content: [{ type: "input_text", text: "hi" }] }],
    truncation: "auto",
    top_logprobs: 2,
    max_tool_calls: 3,
    prompt_cache_retention: "24h",
    service_tier: "flex",
    text: { verbosity: "low" },
    reasoning: { effort: "minimal" },
    metadata: { tag: "x" },
    model_options: { replay: false },
  };
  const response = await post(body);
  expect(response.status).toBe(200);
  const { model_options: _own, ...sent } = body;
  expect(lastUpstreamText()).toBe(JSON.stringify({ ...sent, model: "gpt-5" }));
  // answered whole: the upstream's bytes, its id
  const answer = await response.text();
  expect(answer).toBe(answers.at(-1));
  expect((JSON.parse(answer) as { id: string }).id).toMatch(/^resp_/);
});

test("a field carrierd has never heard of reaches the upstream, and the upstream's refusal reaches the client unchanged", async () => {
  const response = await post({ model: "gpt-5", input: "hi", frobnicate: { level: 3 } });
  expect(upstream.received.at(-1)!.body).toMatchObject({ frobnicate: { level: 3 } });
  expect(response.status).toBe(400);
  expect(await response.text()).toBe(answers.at(-1));
});

describe.each([false, true])("stream=%s", (stream) => {
  test("OpenAI's 429: status, body, retry-after and rate-limit headers unchanged", async () => {
    const response = await post({ model: "gpt-5-busy", stream, input: "hi" });
    expect(response.status).toBe(429);
    expect(response.headers.get("retry-after")).toBe("2");
    expect(response.headers.get("x-ratelimit-remaining-tokens")).toBe("200");
    expect(await response.json()).toEqual(RATE_LIMIT_ERROR);
  });

  test("a client that drops the reasoning items gets them put back before the call they led to; the rest goes as it sent it", async () => {
    const first: Item[] = [userMessage(`Weather in Paris? (${String(stream)})`)];
    const base = { model: "gpt-5", store: false, include: ["reasoning.encrypted_content"], tools: [TOOL], stream };
    const answered = await post({ ...base, input: first }, { "x-session-id": `drops-${String(stream)}` });
    const output = stream
      ? ((await readSse(answered)).events as { type: string; response?: { output: Item[] } }[]).find((event) => event.type === "response.completed")!.response!
          .output
      : ((await answered.json()) as { output: Item[] }).output;
    const reasoning = output.find((item) => item.type === "reasoning")!;
    expect(String(reasoning.encrypted_content)).toMatch(/^gAAAAA/);
    // the client keeps the call and its output, not the reasoning
    const dropped = [...first, ...output.filter((item) => item.type !== "reasoning"), ...toolOutputs(output)];
    const response = await post({ ...base, input: dropped }, { "x-session-id": `drops-${String(stream)}` });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(upstream.received.at(-1)!.status).toBe(200);
    const sent = upstream.received.at(-1)!.body as { input: Item[] };
    const callAt = dropped.findIndex((item) => item.type === "function_call");
    expect(sent).toEqual({ ...base, input: [...dropped.slice(0, callAt), reasoning, ...dropped.slice(callAt)] });
    await response.text();
  });
});

test("carrierd's envelope from a turn answered on another route never reaches the upstream; the call loses carrierd's item id", async () => {
  const input: Item[] = [
    userMessage("Weather in Rome?"),
    { type: "reasoning", id: "rs_carrierd", summary: [], encrypted_content: "cd1.AAAAnot-an-envelope-this-deployment-opens" },
    { type: "function_call", id: "fc_carrierd0123456789abcdef0123", call_id: "call_1", name: "weather", arguments: '{"location":"Rome"}' },
    { type: "function_call_output", call_id: "call_1", output: "18 C" },
  ];
  const response = await post({ model: "gpt-5", store: false, tools: [TOOL], input });
  expect(response.status, await response.clone().text()).toBe(200);
  const sent = upstream.received.at(-1)!.body as { input: Item[] };
  const { id: _id, ...call } = input[2]!;
  expect(sent.input).toEqual([input[0], call, input[3]]);
  await response.text();
});

test("a turn carrierd answered with its envelope (a named conversation, translated) goes upstream carried as the stored turn: its blob, its call's own item id", async () => {
  const ask = userMessage("Weather in Bergen?");
  const answered = await post({
    model: "gpt-5",
    conversation: "carried-after-translated",
    include: ["reasoning.encrypted_content"],
    tools: [TOOL],
    input: [ask],
  });
  const translated = (await answered.json()) as { output: Item[] };
  const upstreamOutput = (JSON.parse(answers.at(-1)!) as { output: Item[] }).output;
  // carrierd's own items: its envelope and its item ids
  expect(String(translated.output.find((item) => item.type === "reasoning")!.encrypted_content)).toMatch(/^cd1\./);
  const input = [ask, ...translated.output, ...toolOutputs(translated.output)];
  const response = await post({ model: "gpt-5", store: false, include: ["reasoning.encrypted_content"], tools: [TOOL], input });
  expect(response.status, await response.clone().text()).toBe(200);
  const sent = upstream.received.at(-1)!.body as { input: Item[] };
  const [reasoning, call] = [upstreamOutput.find((item) => item.type === "reasoning")!, upstreamOutput.find((item) => item.type === "function_call")!];
  const { encrypted_content: _blob, ...stored } = reasoning;
  expect(sent.input[1]).toMatchObject({ ...stored, encrypted_content: reasoning.encrypted_content });
  expect(sent.input[2]).toMatchObject({ type: "function_call", call_id: call.call_id, id: call.id });
  expect(sent.input).toHaveLength(4);
  await response.text();
});

test("a kept Response is stored under the upstream's id: GET returns it, and previous_response_id with it continues, reasoning replayed", async () => {
  const answered = await post({ model: "gpt-5", include: ["reasoning.encrypted_content"], tools: [TOOL], input: "Weather in Oslo?" });
  const first = (await answered.json()) as { id: string; output: Item[] };
  expect(JSON.stringify(first)).toBe(answers.at(-1));
  const stored = await fetch(`${gateway.url}/v1/responses/${first.id}`, { headers: { authorization: `Bearer ${gateway.key}` } });
  expect(await stored.json()).toEqual(first);
  await storageOf(gateway).committed();
  const next = await post({ model: "gpt-5", previous_response_id: first.id, tools: [TOOL], input: toolOutputs(first.output) });
  expect(next.status, await next.clone().text()).toBe(200);
  // carrierd holds the chain, the upstream does not: the stored turn goes upstream, its blob before its call
  const sent = upstream.received.at(-1)!.body as { input: Item[]; previous_response_id?: string };
  expect(sent.previous_response_id).toBeUndefined();
  const reasoning = first.output.find((item) => item.type === "reasoning")!;
  expect(sent.input.find((item) => item.type === "reasoning")).toMatchObject({ encrypted_content: reasoning.encrypted_content });
  expect(upstream.received.at(-1)!.status).toBe(200);
  await next.text();
});

test("with include and store: false, as Codex asks, the first text delta reaches the client while the upstream still holds its end", async () => {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const held = { gate, open, holding: false } as NonNullable<typeof hold>;
  hold = held;
  const input = [...kept([], "as codex"), userMessage("Say something.")];
  const response = await post({ model: "gpt-5", stream: true, store: false, include: ["reasoning.encrypted_content"], input });
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let seenAt: number | undefined;
  let whileHolding = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    if (seenAt === undefined && text.includes("event: response.output_text.delta")) {
      seenAt = performance.now();
      whileHolding = held.holding;
      held.open();
    }
  }
  expect(seenAt).toBeDefined();
  expect(whileHolding).toBe(true);
  expect(seenAt! - held.firstTextAt!).toBeLessThan(50);
  expect(text).toBe(answers.at(-1));
});

import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { RATE_LIMITED, startFaultInjector, type FaultInjector } from "../support/fault-injector.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { startDeepSeek, startOpenAIUpstream, type DeepSeekUpstream, type OpenAIUpstream } from "../support/openai-upstream.js";
import { WEATHER_TOOL } from "./harness.js";

/**
 * The carried path on the chat completions door (docs/api.md#carried-chat-completions):
 * a chat client on an `openai-compatible` route is carried, not rebuilt. The
 * upstream receives the client's bytes, changed only where carrierd must (the
 * model the route maps; the reasoning carriers replay decides; routes.yaml's
 * settings), and the client receives the upstream's answer as it was sent.
 */

const KEY = "sk-emulated";
let deepseek: DeepSeekUpstream;
let flavours: OpenAIUpstream;
let faults: FaultInjector;
let gateway: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  [deepseek, flavours, faults] = await Promise.all([startDeepSeek({ answers: { kind: "recorded" } }), startOpenAIUpstream(), startFaultInjector()]);
  gateway = await startTestGateway({
    routes: `version: 1
providers:
  deepseek: { plugin: openai-compatible, base_url: "${deepseek.baseUrl}", api_key_env: DEEPSEEK_API_KEY }
  strict: { plugin: openai-compatible, base_url: "${flavours.baseUrl("deepseek")}", api_key_env: DEEPSEEK_API_KEY }
  local: { plugin: openai-compatible, base_url: "${flavours.baseUrl("local")}", api_key_env: DEEPSEEK_API_KEY }
  tuned: { plugin: openai-compatible, base_url: "${flavours.baseUrl("local")}", api_key_env: DEEPSEEK_API_KEY }
  faults: { plugin: openai-compatible, base_url: "${faults.baseUrl()}", api_key_env: DEEPSEEK_API_KEY }
models:
  - { name: deepseek-reasoner, provider: deepseek, model: deepseek-reasoner }
  - { name: ds, provider: strict, model: deepseek-v4-pro }
  - { name: local, provider: local, model: qwen3-8b }
  - { name: tuned, provider: tuned, model: qwen3-8b, params: { temperature: 0.3, top_k: 20 } }
  - { name: rate-limit, provider: faults, model: rate-limit }
carriers:
  - match: { provider: [deepseek, strict] }
    fields: [reasoning_content]
    must_echo: true
  - match: { provider: tuned }
    fields: [reasoning_content]
    request_extra: { chat_template_kwargs: { enable_thinking: true } }
  - match: {}
    fields: [reasoning_content]
`,
    env: { DEEPSEEK_API_KEY: KEY },
  });
  client = new OpenAI({ apiKey: gateway.key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await gateway?.stop();
  await Promise.all([deepseek?.close(), flavours?.close(), faults?.close()]);
});

async function post(text: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; text: string }> {
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json", authorization: `Bearer ${gateway.key}` },
    body: text,
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** `text` with its top-level model member's value replaced, as JSON.stringify would have written it with this indent. */
function withModel(text: string, from: string, to: string, indent: number): string {
  const member = (model: string) => JSON.stringify({ model }, null, indent).slice(indent ? 4 : 1, -(indent ? 2 : 1));
  return text.replace(member(from), member(to));
}

describe("the upstream gets the client's bytes", () => {
  const request = {
    model: "local",
    messages: [
      { role: "system", content: "You are terse.", cache_control: { type: "ephemeral" } },
      { role: "user", content: [{ type: "text", text: 'Say "hi" — ünïcode \\ and \u2028 too.' }], name: "ada" },
    ],
    temperature: 0.7,
    logit_bias: { "50256": -100 },
    prediction: { type: "content", content: "hi" },
    frobnicate: { level: 3, list: [1, null, "two"] },
    stream: true,
    stream_options: { include_usage: true },
  };

  for (const indent of [0, 2]) {
    test(`every field, known or not, byte for byte but the model${indent ? " (pretty-printed)" : ""}; openai-* headers as sent`, async () => {
      const text = JSON.stringify(request, null, indent);
      const response = await post(text, { "openai-organization": "org-ada", "openai-project": "proj_1", "OpenAI-Beta": "assistants=v2" });
      expect(response.status, response.text).toBe(200);
      const received = flavours.requestsFor("local").at(-1)!;
      expect(received.raw).toBe(withModel(text, "local", "qwen3-8b", indent));
      expect(received.headers["openai-organization"]).toBe("org-ada");
      expect(received.headers["openai-project"]).toBe("proj_1");
      expect(received.headers["openai-beta"]).toBe("assistants=v2");
      expect(received.headers.authorization).toBe(`Bearer ${KEY}`);
      expect(response.headers.get("x-session-id")).toMatch(/^sess_/);
    });
  }

  test("routes.yaml's params go in where the client set nothing, request_extra over what it set; nothing else changes", async () => {
    const text = JSON.stringify({ ...request, model: "tuned", chat_template_kwargs: { other: 1 } });
    const response = await post(text);
    expect(response.status, response.text).toBe(200);
    const received = flavours.requestsFor("local").at(-1)!;
    // the client's temperature stays; top_k is added at the end, chat_template_kwargs merged in its place
    const expected = text
      .replace('"model":"tuned"', '"model":"qwen3-8b"')
      .replace('"chat_template_kwargs":{"other":1}', '"chat_template_kwargs":{"other":1,"enable_thinking":true}')
      .replace(/}$/, ',"top_k":20}');
    expect(received.raw).toBe(expected);
  });
});

describe("replay: the carriers replay decides, spliced into the client's bytes", () => {
  test("a stateless tool loop against a DeepSeek that refuses a tool turn without its reasoning: put back where the client dropped it", async () => {
    const user = { role: "user", content: "Weather in Florence?" };
    const first = await client.chat.completions.create({ model: "ds", messages: [user as never], tools: [WEATHER_TOOL] });
    const call = first.choices[0]!.message.tool_calls![0]!;
    const reasoning = (first.choices[0]!.message as unknown as { reasoning_content: string }).reasoning_content;
    expect(reasoning).toMatch(/^Step \d+: /);
    // the client keeps the call, drops the reasoning, and sends a field of its own on the message
    const assistant = { role: "assistant", content: null, tool_calls: [call], client_note: "kept" };
    const body = { model: "ds", messages: [user, assistant, { role: "tool", tool_call_id: call.id, content: "40 C" }], tools: [WEATHER_TOOL] };
    const text = JSON.stringify(body);
    const response = await post(text);
    expect(response.status, response.text).toBe(200);
    const received = flavours.requestsFor("deepseek").at(-1)!;
    expect(received.status).toBe(200);
    const withReasoning = { ...assistant, reasoning_content: reasoning };
    expect(received.raw).toBe(text.replace('"model":"ds"', '"model":"deepseek-v4-pro"').replace(JSON.stringify(assistant), JSON.stringify(withReasoning)));
  });

  test("a carrier the route does not allow is removed from the client's message, the rest kept as sent", async () => {
    const user = { role: "user", content: "Hello there" };
    const first = await client.chat.completions.create({ model: "ds", messages: [user as never] });
    const answer = first.choices[0]!.message;
    const stored = (answer as unknown as { reasoning_content: string }).reasoning_content;
    // `reasoning` is not in the route's fields; the client's own reasoning_content is replaced by what the store holds
    const assistant = { role: "assistant", content: answer.content, reasoning: "my own retelling", reasoning_content: "a retelling" };
    const text = JSON.stringify({ model: "ds", messages: [user, assistant, { role: "user", content: "And?" }] });
    const response = await post(text);
    expect(response.status, response.text).toBe(200);
    const expected = { role: "assistant", content: answer.content, reasoning_content: stored };
    expect(flavours.requestsFor("deepseek").at(-1)!.raw).toBe(
      text.replace('"model":"ds"', '"model":"deepseek-v4-pro"').replace(JSON.stringify(assistant), JSON.stringify(expected)),
    );
  });
});

describe("the answer reaches the client as the upstream sent it", () => {
  const ask = { model: "deepseek-reasoner", messages: [{ role: "user", content: "How many r's in strawberry?" }], logprobs: true, service_tier: "auto" };

  test("streamed: every frame as DeepSeek sent it, logprobs, system_fingerprint and service_tier with it", async () => {
    const response = await post(JSON.stringify({ ...ask, stream: true }));
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    expect(response.text).toBe(deepseek.exchanges.at(-1)!.answered);
    const chunks = response.text
      .split("\n\n")
      .filter((frame) => frame.startsWith("data: {"))
      .map((frame) => JSON.parse(frame.slice(6)) as Record<string, unknown> & { choices: { logprobs: unknown }[] });
    expect(chunks.every((chunk) => chunk.system_fingerprint === "fp_eaab8d114b_prod0820_fp8_kvcache" && chunk.service_tier === "default")).toBe(true);
    expect(chunks.some((chunk) => (chunk.choices[0]?.logprobs as { content?: unknown[] } | null)?.content?.length)).toBe(true);
    // and the openai SDK reads them
    const stream = await client.chat.completions.create({ ...(ask as never), stream: true });
    let fingerprint: string | null | undefined;
    let tier: string | null | undefined;
    for await (const chunk of stream) {
      fingerprint ??= chunk.system_fingerprint;
      tier ??= chunk.service_tier;
    }
    expect([fingerprint, tier]).toEqual(["fp_eaab8d114b_prod0820_fp8_kvcache", "default"]);
  });

  test("whole: DeepSeek's body byte for byte, logprobs, system_fingerprint and service_tier with it", async () => {
    const response = await post(JSON.stringify(ask));
    expect(response.status).toBe(200);
    expect(response.text).toBe(deepseek.exchanges.at(-1)!.answered);
    const completion = await client.chat.completions.create(ask as never);
    expect(completion.system_fingerprint).toBeTruthy();
    expect(completion.service_tier).toBe("default");
    expect(completion.choices[0]!.logprobs!.content![0]!.logprob).toBe(-0.0125);
    expect(completion.id).toBe(JSON.parse(deepseek.exchanges.at(-1)!.answered!).id);
  });

  test("an upstream refusal: its status, body, retry-after and rate-limit headers unchanged, streamed or not", async () => {
    for (const stream of [false, true]) {
      const response = await post(JSON.stringify({ model: "rate-limit", stream, messages: [{ role: "user", content: "hi" }] }));
      expect(response.status).toBe(429);
      expect(response.text).toBe(JSON.stringify({ error: { message: RATE_LIMITED, type: "requests", param: null, code: "rate_limit_exceeded" } }));
      expect(response.headers.get("retry-after")).toBe("7");
      expect(response.headers.get("x-ratelimit-remaining-requests")).toBe("0");
      expect(response.headers.get("x-ratelimit-reset-requests")).toBe("7s");
      expect(response.headers.get("x-unrelated")).toBeNull();
    }
  });

  test("DeepSeek's own 400 reaches the client as DeepSeek wrote it", async () => {
    const response = await post(JSON.stringify({ model: "deepseek-reasoner", messages: [{ role: "user", content: "FAIL_400" }] }));
    expect(response.status).toBe(400);
    expect(response.text).toContain("The `reasoning_content` in the thinking mode must be passed back to the API.");
    expect(JSON.parse(response.text)).toEqual({
      error: {
        message: "The `reasoning_content` in the thinking mode must be passed back to the API.",
        type: "invalid_request_error",
        param: null,
        code: "invalid_request_error",
      },
    });
  });
});

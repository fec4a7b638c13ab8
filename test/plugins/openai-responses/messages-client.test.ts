import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startTestGateway, storageOf, type TestGateway } from "../../support/gateway.js";
import { startOpenAIResponsesUpstream, type ResponsesUpstream } from "../../support/openai-responses-upstream.js";

/**
 * A Messages API client (the Anthropic SDK) through carrierd to the
 * Responses API: its thinking budget becomes `reasoning.effort`, OpenAI's
 * summaries come back as thinking, and the reasoning item goes back to
 * OpenAI before its call on the next request — from the store, or from the
 * thinking block's envelope once the session is removed.
 */
const KEY = "sk-openai-test";
let upstream: ResponsesUpstream;
let gateway: TestGateway;
let client: Anthropic;
beforeAll(async () => {
  upstream = await startOpenAIResponsesUpstream({ apiKey: KEY });
  gateway = await startTestGateway({
    routes: `version: 1
providers:
  openai: { plugin: openai-responses, base_url: ${upstream.url}/v1, api_key_env: OPENAI_API_KEY }
models:
  - { name: claude-sonnet-4-5, provider: openai, model: gpt-5 }
carriers:
  - match: { plugin: openai-responses }
    fields: []
`,
    env: { OPENAI_API_KEY: KEY },
  });
  client = new Anthropic({ apiKey: gateway.key, baseURL: gateway.url, maxRetries: 0 });
});
afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
});

const WEATHER: Anthropic.Tool = { name: "weather", input_schema: { type: "object", properties: { location: { type: "string" } } } };

describe.each([
  [false, "kept"],
  [true, "removed"],
] as const)("stream=%s, session %s", (stream, session) => {
  test("thinking budget → effort, summaries as thinking, the reasoning item back before its call", async () => {
    const before = upstream.received.length;
    const params: Anthropic.MessageCreateParamsNonStreaming = {
      model: "claude-sonnet-4-5",
      max_tokens: 8000,
      thinking: { type: "enabled", budget_tokens: 2048 },
      tools: [WEATHER],
      messages: [{ role: "user", content: `What is the weather in Paris? (${stream} ${session})` }],
    };
    const running = stream ? client.messages.stream(params) : client.messages.create(params);
    const { response } = await running.withResponse();
    const assistant = stream ? await (running as ReturnType<typeof client.messages.stream>).finalMessage() : await (running as Promise<Anthropic.Message>);
    expect(upstream.received.at(-1)!.body!.reasoning).toEqual({ effort: "low", summary: "auto" });
    expect(assistant.content[0]).toMatchObject({ type: "thinking", thinking: "**Choosing a tool**\n\nI should look it up." });
    if (session === "removed") await storageOf(gateway).sessions.remove(response.headers.get("x-session-id")!);
    const calls = assistant.content.filter((block) => block.type === "tool_use");
    expect(calls).toHaveLength(1);
    const second = await client.messages.create({
      ...params,
      messages: [
        ...params.messages,
        { role: "assistant", content: assistant.content as Anthropic.ContentBlockParam[] },
        { role: "user", content: calls.map((call) => ({ type: "tool_result" as const, tool_use_id: call.id, content: "sunny" })) },
      ],
    });
    expect(second.content.at(-1)).toMatchObject({ type: "text", text: "Done after 1 tool round(s)." });
    expect(upstream.received.slice(before).map((request) => request.status)).toEqual([200, 200]);
    const input = upstream.received.at(-1)!.body!.input as Record<string, unknown>[];
    expect(input.map((item) => item.type)).toEqual(["message", "reasoning", "function_call", "function_call_output"]);
    expect(input[1]!.encrypted_content).toMatch(/^gAAAAA/);
  });
});

test("Messages client: reasoning off (thinking disabled) asks for no summary", async () => {
  await client.messages.create({ model: "claude-sonnet-4-5", max_tokens: 100, thinking: { type: "disabled" }, messages: [{ role: "user", content: "hi" }] });
  expect(upstream.received.at(-1)!.body!.reasoning).toBeUndefined();
});

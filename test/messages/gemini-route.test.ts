import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, expect, test } from "vitest";
import { SKIP, startGeminiEmulator } from "../plugins/emulators/gemini-emulator.js";
import type { Emulator } from "../plugins/emulators/http-emulator.js";
import { startTestGateway, storageOf, type TestGateway } from "../support/gateway.js";

/**
 * A Gemini route behind the Messages API: its thought signatures live only
 * in the plugin's native record, so a Messages client keeps them in its
 * thinking blocks' envelope. The session is removed after each turn: only
 * the envelope can bring them back, or Gemini gets the skip placeholder.
 */
let gemini: Emulator;
let gateway: TestGateway;
let client: Anthropic;

beforeAll(async () => {
  gemini = await startGeminiEmulator({ apiKey: "gemini-test-key" });
  gateway = await startTestGateway({
    routes: `version: 1
providers:
  gemini: { plugin: gemini, base_url: ${gemini.url}, api_key_env: GEMINI_API_KEY }
models:
  - { name: claude-sonnet-4-5, provider: gemini, model: gemini-3-pro-preview }
carriers:
  - match: {}
    fields: [reasoning_content]
`,
    env: { GEMINI_API_KEY: "gemini-test-key" },
  });
  client = new Anthropic({ apiKey: gateway.key, baseURL: gateway.url, maxRetries: 0 });
});
afterAll(async () => {
  await gateway?.stop();
  await gemini?.close();
});

const WEATHER: Anthropic.Tool = { name: "weather", input_schema: { type: "object", properties: { location: { type: "string" } } } };

async function loop(stream: boolean, thinking: "kept" | "dropped"): Promise<string> {
  const params: Anthropic.MessageCreateParamsNonStreaming = {
    model: "claude-sonnet-4-5",
    max_tokens: 2048,
    tools: [WEATHER],
    messages: [{ role: "user", content: `What is the weather in Florence? (${stream} ${thinking})` }],
  };
  const running = stream ? client.messages.stream(params) : client.messages.create(params);
  const { response } = await running.withResponse();
  const assistant = stream ? await (running as ReturnType<typeof client.messages.stream>).finalMessage() : await (running as Promise<Anthropic.Message>);
  expect(assistant.content[0]!.type).toBe("thinking");
  expect((assistant.content[0] as Anthropic.ThinkingBlock).signature).toMatch(/^cd1\./);
  await storageOf(gateway).sessions.remove(response.headers.get("x-session-id")!);
  const calls = assistant.content.filter((block) => block.type === "tool_use");
  const content = (thinking === "kept" ? assistant.content : assistant.content.filter((block) => block.type !== "thinking")) as Anthropic.ContentBlockParam[];
  await client.messages.create({
    ...params,
    messages: [
      ...params.messages,
      { role: "assistant", content },
      { role: "user", content: calls.map((call) => ({ type: "tool_result" as const, tool_use_id: call.id, content: "sunny" })) },
    ],
  });
  return gemini.received.at(-1)!.raw.toString();
}

test.each([false, true])("stream=%s: the thinking blocks' envelope brings Gemini's thought signatures back after the session is gone", async (stream) => {
  expect(await loop(stream, "kept")).not.toContain(SKIP);
  expect(gemini.received.at(-1)!.status).toBe(200);
});

test("the control: without the thinking blocks, Gemini gets the skip placeholder", async () => {
  expect(await loop(false, "dropped")).toContain(SKIP);
});

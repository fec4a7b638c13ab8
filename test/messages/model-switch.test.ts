import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, expect, test } from "vitest";
import { startAnthropicEmulator, type AnthropicEmulator } from "../plugins/emulators/anthropic-emulator.js";
import { startGeminiEmulator } from "../plugins/emulators/gemini-emulator.js";
import type { Emulator } from "../plugins/emulators/http-emulator.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { startDeepSeek, type DeepSeekUpstream } from "../support/openai-upstream.js";

/**
 * One conversation on the Messages door, switched as Claude Code's `/model`
 * switches it: DeepSeek → Anthropic → Gemini → DeepSeek, a tool loop on
 * each. Every upstream refuses what is not its own (Anthropic a signature it
 * did not issue, DeepSeek a tool turn without its reasoning), and every
 * request is accepted the first time: carrierd's envelopes never reach
 * Anthropic, Anthropic's signatures never reach the others
 * (docs/sessions-and-replay.md#switching-models).
 */
let deepseek: DeepSeekUpstream;
let anthropic: AnthropicEmulator;
let gemini: Emulator;
let gateway: TestGateway;
let client: Anthropic;

beforeAll(async () => {
  deepseek = await startDeepSeek();
  anthropic = await startAnthropicEmulator({ apiKey: "sk-ant-emulated" });
  gemini = await startGeminiEmulator({ apiKey: "gemini-test-key" });
  gateway = await startTestGateway({
    routes: `version: 1
providers:
  deepseek: { plugin: openai-compatible, base_url: "${deepseek.baseUrl}", api_key_env: DEEPSEEK_API_KEY }
  anthropic: { plugin: anthropic, base_url: "${anthropic.url}", api_key_env: ANTHROPIC_API_KEY }
  gemini: { plugin: gemini, base_url: ${gemini.url}, api_key_env: GEMINI_API_KEY }
models:
  - { name: deepseek-reasoner, provider: deepseek, model: deepseek-reasoner }
  - { name: claude-sonnet-4-5, provider: anthropic, model: claude-sonnet-4-5-20250929 }
  - { name: gemini-3-pro, provider: gemini, model: gemini-3-pro-preview }
carriers:
  - match: { provider: deepseek }
    fields: [reasoning_content]
    must_echo: true
  - match: {}
    fields: [reasoning_content]
dialects:
  - match: { provider: deepseek }
    effort: reasoning_effort
    disable: thinking
    developer_role: system
`,
    env: { DEEPSEEK_API_KEY: "sk-emulated", ANTHROPIC_API_KEY: "sk-ant-emulated", GEMINI_API_KEY: "gemini-test-key" },
  });
  client = new Anthropic({ apiKey: gateway.key, baseURL: gateway.url, maxRetries: 0 });
});
afterAll(async () => {
  await gateway?.stop();
  await deepseek?.close();
  await anthropic?.close();
  await gemini?.close();
});

const WEATHER: Anthropic.Tool = {
  name: "weather",
  description: "Get the weather in a location",
  input_schema: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
};

/** One request as Claude Code streams it, the answer's blocks resent as they came. */
async function ask(model: string, messages: Anthropic.MessageParam[]): Promise<Anthropic.Message> {
  return client.messages.stream({ model, max_tokens: 4096, thinking: { type: "enabled", budget_tokens: 2048 }, tools: [WEATHER], messages }).finalMessage();
}

test("DeepSeek → Anthropic → Gemini → DeepSeek on the Messages door: every request accepted first time", { timeout: 60_000 }, async () => {
  const messages: Anthropic.MessageParam[] = [{ role: "user", content: "What is the weather in Florence?" }];
  const signaturesSeen: Record<string, string[]> = {};
  for (const [step, model] of ["deepseek-reasoner", "claude-sonnet-4-5", "gemini-3-pro", "deepseek-reasoner"].entries()) {
    const call = await ask(model, messages);
    const toolUse = call.content.find((block) => block.type === "tool_use");
    expect(toolUse, `${model} answered ${JSON.stringify(call.content)}`).toBeDefined();
    messages.push({ role: "assistant", content: call.content as Anthropic.ContentBlockParam[] });
    messages.push({ role: "user", content: [{ type: "tool_result", tool_use_id: toolUse!.id, content: "18°C and sunny" }] });
    const answer = await ask(model, messages);
    expect(answer.stop_reason).toBe("end_turn");
    messages.push({ role: "assistant", content: answer.content as Anthropic.ContentBlockParam[] });
    messages.push({ role: "user", content: `And step ${step + 1}?` });
    for (const block of [...call.content, ...answer.content]) if (block.type === "thinking") (signaturesSeen[model] ??= []).push(block.signature);
  }
  // each upstream accepted every request it was sent, the first time
  expect(deepseek.statuses.every((status) => status === 200)).toBe(true);
  expect(anthropic.received.map((request) => request.status)).toEqual([200, 200]);
  expect(gemini.received.every((request) => request.status === 200)).toBe(true);
  // carrierd's envelopes never reached Anthropic; Anthropic's signatures never reached the others
  const toAnthropic = anthropic.received.map((request) => request.raw.toString()).join("\n");
  expect(toAnthropic).not.toContain('"cd1.');
  for (const signature of signaturesSeen["claude-sonnet-4-5"] ?? []) {
    expect(gemini.received.map((request) => request.raw.toString()).join("\n")).not.toContain(signature);
    expect(JSON.stringify(deepseek.requests)).not.toContain(signature);
  }
  expect(signaturesSeen["claude-sonnet-4-5"]?.length).toBeGreaterThan(0);
});

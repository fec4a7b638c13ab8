import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { ask } from "../support/stateless-client.js";
import { sign, startAnthropicEmulator, type AnthropicEmulator } from "./emulators/anthropic-emulator.js";

/**
 * Claude on adaptive thinking (Opus 4.6 and later): `thinking: {type:
 * "adaptive"}`, and on Opus 4.7+ `display: "omitted"` by default — thinking
 * blocks with empty text and a signature only
 * (https://github.com/docker/docker-agent/pull/3415). Such a block carries
 * nothing to show, and still must go back before the tool call it preceded.
 */
const weather = {
  type: "function",
  function: { name: "weather", description: "Weather", parameters: { type: "object", properties: { location: { type: "string" } } } },
};

let anthropic: AnthropicEmulator;
let gateway: TestGateway;
beforeAll(async () => {
  anthropic = await startAnthropicEmulator({ apiKey: "sk-ant-test" });
  gateway = await startTestGateway({
    routes: `version: 1
providers:
  anthropic: { plugin: anthropic, base_url: ${anthropic.url}, api_key_env: ANTHROPIC_API_KEY }
models:
  - { name: opus-omitted, provider: anthropic, model: claude-opus-4-7, params: { max_tokens: 8000, thinking: { type: adaptive, display: omitted } } }
  - { name: opus-summarized, provider: anthropic, model: claude-opus-4-7, params: { max_tokens: 8000, thinking: { type: adaptive, display: summarized } } }
carriers:
  - match: {}
    fields: [reasoning_content]
`,
    env: { ANTHROPIC_API_KEY: "sk-ant-test" },
  });
});
afterAll(async () => {
  await gateway?.stop();
  await anthropic?.close();
});

describe.each([false, true])("stream=%s", (stream) => {
  test("display omitted: the empty, signed thinking block goes back before its tool call, and the loop is accepted", async () => {
    const user = { role: "user", content: `Weather in Florence? (${String(stream)})` };
    const first = await ask(gateway, { model: "opus-omitted", stream, tools: [weather], messages: [user] });
    expect(first.status).toBe(200);
    expect(first.reasoning).toBe("");
    const id = (first.kept.tool_calls as { id: string }[])[0]!.id;
    const second = await ask(gateway, {
      model: "opus-omitted",
      stream,
      tools: [weather],
      messages: [user, first.kept, { role: "tool", tool_call_id: id, content: "30 C" }],
    });
    expect(second.error).toBeUndefined();
    expect(second.status).toBe(200);
    const sent = anthropic.received.at(-1)!.body!;
    expect(sent.thinking).toEqual({ type: "adaptive", display: "omitted" });
    const assistant = (sent.messages as { role: string; content: { type: string }[] }[])[1]!;
    expect(assistant.content[0]).toEqual({ type: "thinking", thinking: "", signature: sign("") });
    expect(assistant.content[1]).toMatchObject({ type: "tool_use", id });
  });
});

test("display summarized: the thinking streams as reasoning and goes back signed", async () => {
  const user = { role: "user", content: "Weather in Rome?" };
  const first = await ask(gateway, { model: "opus-summarized", stream: true, tools: [weather], messages: [user] });
  expect(first.reasoning).toBe("The user wants weather. I will call it for Florence.");
  const id = (first.kept.tool_calls as { id: string }[])[0]!.id;
  const second = await ask(gateway, {
    model: "opus-summarized",
    tools: [weather],
    messages: [user, first.kept, { role: "tool", tool_call_id: id, content: "25 C" }],
  });
  expect(second.status).toBe(200);
});

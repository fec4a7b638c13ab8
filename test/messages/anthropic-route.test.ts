import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { sign, startAnthropicEmulator, type AnthropicEmulator } from "../plugins/emulators/anthropic-emulator.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";

const KEY = "sk-ant-emulated";
let anthropic: AnthropicEmulator;
let gateway: TestGateway;
let client: Anthropic;

beforeAll(async () => {
  anthropic = await startAnthropicEmulator({ apiKey: KEY, redacted: true });
  gateway = await startTestGateway({
    routes: `version: 1
providers:
  anthropic: { plugin: anthropic, base_url: "${anthropic.url}", api_key_env: ANTHROPIC_API_KEY }
models:
  - { name: claude-sonnet-4-5, provider: anthropic, model: claude-sonnet-4-5-20250929 }
carriers:
  - match: {}
    fields: [reasoning_content]
`,
    env: { ANTHROPIC_API_KEY: KEY },
  });
  client = new Anthropic({ apiKey: gateway.key, baseURL: gateway.url, maxRetries: 0 });
});
afterAll(async () => {
  await gateway?.stop();
  await anthropic?.close();
});

const WEATHER: Anthropic.Tool = {
  name: "weather",
  description: "Get the weather in a location",
  input_schema: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
  cache_control: { type: "ephemeral" },
};

function params(content: string): Anthropic.MessageCreateParamsNonStreaming {
  return {
    model: "claude-sonnet-4-5",
    max_tokens: 4096,
    thinking: { type: "enabled", budget_tokens: 2048 },
    system: [{ type: "text", text: "You are a weather bot.", cache_control: { type: "ephemeral" } }],
    tools: [WEATHER],
    messages: [{ role: "user", content: [{ type: "text", text: content, cache_control: { type: "ephemeral" } }] }],
  };
}

describe("@anthropic-ai/sdk through carrierd to an Anthropic route", () => {
  for (const stream of [false, true]) {
    test(`${stream ? "messages.stream" : "messages.create"}: redacted_thinking and thinking blocks with the upstream's own signatures, byte for byte`, async () => {
      const request = params(`Weather in Florence? ${stream}`);
      const message = stream ? await client.messages.stream(request).finalMessage() : await client.messages.create(request);
      expect(message.content.map((block) => block.type)).toEqual(["redacted_thinking", "thinking", "tool_use"]);
      const upstreamBody = anthropic.received.at(-1)!.body!;
      // the client's system, tools and cache_control went upstream as sent
      expect(upstreamBody.system).toEqual(request.system);
      expect(upstreamBody.tools).toEqual(request.tools);
      const thinking = message.content[1] as Anthropic.ThinkingBlock;
      expect(thinking.signature).toBe(sign(thinking.thinking));
      expect((message.content[0] as Anthropic.RedactedThinkingBlock).data).toMatch(/\./);
      expect(message.stop_reason).toBe("tool_use");
    });
  }

  test("a tool loop: the turn sent back whole is accepted as the client sent it; without its thinking blocks, the stored signed blocks are re-attached", async () => {
    const first = params("Weather in Florence, loop?");
    const assistant = await client.messages.create(first);
    const toolUse = assistant.content.find((block) => block.type === "tool_use")!;
    const next = (content: Anthropic.ContentBlockParam[]): Anthropic.MessageCreateParamsNonStreaming => ({
      ...first,
      messages: [
        ...first.messages,
        { role: "assistant", content },
        { role: "user", content: [{ type: "tool_result", tool_use_id: toolUse.id, content: "18°C" }] },
      ],
    });
    const whole = await client.messages.create(next(assistant.content as Anthropic.ContentBlockParam[]));
    expect(whole.stop_reason).toBe("end_turn");
    const sentWhole = (anthropic.received.at(-1)!.body!.messages as { content: unknown }[])[1]!.content;
    expect(sentWhole).toEqual(assistant.content);

    const dropped = await client.messages.create(next([toolUse as Anthropic.ContentBlockParam]));
    expect(dropped.stop_reason).toBe("end_turn");
    const sentDropped = (anthropic.received.at(-1)!.body!.messages as { content: unknown }[])[1]!.content;
    expect(sentDropped).toEqual(assistant.content);
  });

  test("anthropic-beta goes upstream with the request, and a beta-gated key with it", async () => {
    const request = { ...params("Weather with context management?"), context_management: { edits: [{ type: "clear_thinking_20251015", keep: "all" }] } };
    const message = await client.beta.messages.create({
      ...request,
      betas: ["context-management-2025-06-27"],
    } as Anthropic.Beta.MessageCreateParamsNonStreaming);
    expect(message.stop_reason).toBe("tool_use");
    expect(anthropic.received.at(-1)!.headers["anthropic-beta"]).toContain("context-management-2025-06-27");
    expect(anthropic.received.at(-1)!.body!.context_management).toEqual(request.context_management);
  });

  test("countTokens: the upstream's own count", async () => {
    const counted = await client.messages.countTokens({ model: "claude-sonnet-4-5", messages: [{ role: "user", content: "hello ".repeat(100) }] });
    const asked = anthropic.received.at(-1)!;
    expect(asked.path).toBe("/v1/messages/count_tokens");
    expect(asked.body!.model).toBe("claude-sonnet-4-5-20250929");
    expect(counted.input_tokens).toBe(Math.ceil(JSON.stringify(["", asked.body!.messages, []]).length / 4));
  });

  test("thinking blocks the store does not hold go upstream as the client sent them, and Anthropic judges their signatures", async () => {
    const turn = (thinking: string, signature: string): Anthropic.MessageCreateParamsNonStreaming => ({
      ...params("continued"),
      messages: [
        { role: "user", content: "Weather in Florence, begun elsewhere?" },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking, signature },
            { type: "tool_use", id: "toolu_0123456789abcdef0123", name: "weather", input: { location: "Florence" } },
          ],
        },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_0123456789abcdef0123", content: "18°C" }] },
      ],
    });
    const valid = await client.messages.create(turn("Begun with another gateway.", sign("Begun with another gateway.")));
    expect(valid.stop_reason).toBe("end_turn");
    expect((anthropic.received.at(-1)!.body!.messages as { content: unknown }[])[1]!.content).toEqual([
      { type: "thinking", thinking: "Begun with another gateway.", signature: sign("Begun with another gateway.") },
      { type: "tool_use", id: "toolu_0123456789abcdef0123", name: "weather", input: { location: "Florence" } },
    ]);
    // an altered block is Anthropic's to refuse, with its own status, type and message
    const forged = client.messages.create(turn("Begun with another gateway, edited.", sign("Begun with another gateway.")));
    await expect(forged).rejects.toBeInstanceOf(Anthropic.BadRequestError);
    await expect(forged).rejects.toMatchObject({ status: 400, error: { type: "error", error: { type: "invalid_request_error" } } });
    await expect(forged).rejects.toThrow(/Invalid `signature` in `thinking` block/);
  });
});

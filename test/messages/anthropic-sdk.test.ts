import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startTestGateway, storageOf, type TestGateway } from "../support/gateway.js";
import { deepseekRoutes } from "../support/family-routes.js";
import { startDeepSeek, type DeepSeekUpstream } from "../support/openai-upstream.js";

let upstream: DeepSeekUpstream;
let gateway: TestGateway;
let client: Anthropic;

beforeAll(async () => {
  upstream = await startDeepSeek();
  gateway = await startTestGateway({ routes: deepseekRoutes(upstream.baseUrl), env: { DEEPSEEK_API_KEY: "sk-emulated" } });
  client = new Anthropic({ apiKey: gateway.key, baseURL: gateway.url, maxRetries: 0 });
});
afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
});

const WEATHER: Anthropic.Tool = {
  name: "weather",
  description: "Get the weather in a location",
  input_schema: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
};

describe.each(["demo", "deepseek-reasoner"])("@anthropic-ai/sdk against %s", (model) => {
  test("messages.create: thinking block first, then the text; end_turn and usage", async () => {
    const message = await client.messages.create({
      model,
      max_tokens: 1024,
      thinking: { type: "enabled", budget_tokens: 2048 },
      system: "You are terse.",
      messages: [{ role: "user", content: "What is 2+2?" }],
    });
    expect(message.type).toBe("message");
    expect(message.role).toBe("assistant");
    expect(message.model).toBe(model);
    expect(message.id).toMatch(/^msg_/);
    expect(message.content.map((block) => block.type)).toEqual(["thinking", "text"]);
    const thinking = message.content[0] as Anthropic.ThinkingBlock;
    expect(thinking.thinking.length).toBeGreaterThan(10);
    expect(typeof thinking.signature).toBe("string");
    expect((message.content[1] as Anthropic.TextBlock).text.length).toBeGreaterThan(0);
    expect(message.stop_reason).toBe("end_turn");
    expect(message.stop_sequence).toBeNull();
    expect(message.usage.output_tokens).toBeGreaterThan(0);
  });

  test("messages.stream: the SDK assembles the same message from Anthropic's events", async () => {
    const stream = client.messages.stream({ model, max_tokens: 1024, messages: [{ role: "user", content: "What is 2+2?" }] });
    const kinds: string[] = [];
    let thinkingText = "";
    stream.on("streamEvent", (event) => kinds.push(event.type));
    stream.on("thinking", (delta) => (thinkingText += delta));
    const message = await stream.finalMessage();
    expect(kinds[0]).toBe("message_start");
    expect(kinds.slice(-2)).toEqual(["message_delta", "message_stop"]);
    expect(message.content.map((block) => block.type)).toEqual(["thinking", "text"]);
    expect((message.content[0] as Anthropic.ThinkingBlock).thinking).toBe(thinkingText);
    expect(message.stop_reason).toBe("end_turn");
  });

  test("thinking disabled: no thinking block reaches the client", async () => {
    const message = await client.messages.create({
      model,
      max_tokens: 512,
      thinking: { type: "disabled" },
      messages: [{ role: "user", content: "What is 2+2?" }],
    });
    expect(message.content.map((block) => block.type)).toEqual(["text"]);
  });

  test("thinking.display omitted: the thinking block keeps its place and signature, without its text", async () => {
    const thinking = { type: "enabled", budget_tokens: 2048, display: "omitted" } as Anthropic.ThinkingConfigEnabled;
    const message = await client.messages.stream({ model, max_tokens: 1024, thinking, messages: [{ role: "user", content: "What is 2+2?" }] }).finalMessage();
    expect(message.content.map((block) => block.type)).toEqual(["thinking", "text"]);
    expect((message.content[0] as Anthropic.ThinkingBlock).thinking).toBe("");
  });

  test("countTokens: carrierd's own estimate of the request as it would go upstream", async () => {
    const small = await client.messages.countTokens({ model, messages: [{ role: "user", content: "hi" }] });
    const large = await client.messages.countTokens({ model, messages: [{ role: "user", content: "hello ".repeat(400) }], tools: [WEATHER] });
    expect(small.input_tokens).toBeGreaterThan(0);
    expect(large.input_tokens).toBeGreaterThan(small.input_tokens + 400);
  });
});

describe("what a Messages request becomes on an OpenAI-compatible route", () => {
  test("thinking, tools, tool_choice, stop_sequences and system in the upstream's names; cache_control and metadata left out", async () => {
    await client.messages.create({
      model: "deepseek-reasoner",
      max_tokens: 700,
      thinking: { type: "enabled", budget_tokens: 2048 },
      system: [
        { type: "text", text: "First rule." },
        { type: "text", text: "Second rule.", cache_control: { type: "ephemeral" } },
      ],
      tools: [WEATHER],
      tool_choice: { type: "tool", name: "weather", disable_parallel_tool_use: true },
      stop_sequences: ["END"],
      metadata: { user_id: "someone" },
      messages: [{ role: "user", content: [{ type: "text", text: "Weather?", cache_control: { type: "ephemeral" } }] }],
    });
    const sent = upstream.requests.at(-1)! as unknown as Record<string, unknown>;
    expect(sent).toMatchObject({
      model: "deepseek-reasoner",
      max_tokens: 700,
      reasoning_effort: "low",
      stop: ["END"],
      tool_choice: { type: "function", function: { name: "weather" } },
      parallel_tool_calls: false,
      tools: [{ type: "function", function: { name: "weather", description: WEATHER.description, parameters: WEATHER.input_schema } }],
      messages: [
        { role: "system", content: "First rule.\n\nSecond rule." },
        { role: "user", content: "Weather?" },
      ],
    });
    expect(JSON.stringify(sent)).not.toMatch(/cache_control|metadata|someone|budget_tokens/);
  });

  test("a tool result's text becomes the tool message; its image follows in a user message, as OpenAI tool messages hold text only", async () => {
    const pixel = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
    await client.messages.create({
      model: "deepseek-reasoner",
      max_tokens: 256,
      messages: [
        { role: "user", content: "Take a screenshot." },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_screen_0001", name: "screenshot", input: {} }] },
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: "toolu_screen_0001",
              is_error: false,
              content: [
                { type: "text", text: "Here it is." },
                { type: "image", source: { type: "base64", media_type: "image/png", data: pixel } },
              ],
            },
            { type: "text", text: "What do you see?" },
          ],
        },
      ],
    });
    expect(upstream.requests.at(-1)!.messages.slice(1)).toEqual([
      expect.objectContaining({
        role: "assistant",
        tool_calls: [{ id: "toolu_screen_0001", type: "function", function: { name: "screenshot", arguments: "{}" } }],
      }),
      { role: "tool", tool_call_id: "toolu_screen_0001", content: "Here it is." },
      {
        role: "user",
        content: [
          { type: "image_url", image_url: { url: `data:image/png;base64,${pixel}` } },
          { type: "text", text: "What do you see?" },
        ],
      },
    ]);
  });

  test("thinking disabled asks DeepSeek not to think; high budgets ask for high effort", async () => {
    await client.messages.create({ model: "deepseek-reasoner", max_tokens: 256, thinking: { type: "disabled" }, messages: [{ role: "user", content: "hi" }] });
    expect(upstream.requests.at(-1)).toMatchObject({ thinking: { type: "disabled" } });
    // (the SDK streams a request this large: Claude Code's own 32,000-token asks are streamed too)
    await client.messages
      .stream({
        model: "deepseek-reasoner",
        max_tokens: 40000,
        thinking: { type: "enabled", budget_tokens: 31999 },
        messages: [{ role: "user", content: "hi" }],
      })
      .finalMessage();
    expect(upstream.requests.at(-1)).toMatchObject({ reasoning_effort: "high" });
  });
});

describe("a two-turn tool loop with thinking against the strict DeepSeek emulator", () => {
  async function firstTurn(stream: boolean): Promise<{ params: Anthropic.MessageCreateParamsNonStreaming; assistant: Anthropic.Message; sessionId: string }> {
    const params: Anthropic.MessageCreateParamsNonStreaming = {
      model: "deepseek-reasoner",
      max_tokens: 2048,
      thinking: { type: "enabled", budget_tokens: 4096 },
      tools: [WEATHER],
      messages: [{ role: "user", content: `What's the weather in Paris? (${stream ? "streamed" : "whole"} ${Math.random()})` }],
    };
    if (stream) {
      const running = client.messages.stream(params);
      const { response } = await running.withResponse();
      return { params, assistant: await running.finalMessage(), sessionId: response.headers.get("x-session-id")! };
    }
    const { data, response } = await client.messages.create(params).withResponse();
    return { params, assistant: data, sessionId: response.headers.get("x-session-id")! };
  }

  function secondTurn(
    params: Anthropic.MessageCreateParamsNonStreaming,
    content: Anthropic.ContentBlockParam[],
    toolId: string,
  ): Anthropic.MessageCreateParamsNonStreaming {
    return {
      ...params,
      messages: [
        ...params.messages,
        { role: "assistant", content },
        { role: "user", content: [{ type: "tool_result", tool_use_id: toolId, content: "18°C and sunny" }] },
      ],
    };
  }

  for (const stream of [false, true]) {
    test(`${stream ? "streamed" : "whole"}: tool_use with its thinking, then the answer whether the client resends its thinking or not`, async () => {
      const { params, assistant } = await firstTurn(stream);
      expect(assistant.stop_reason).toBe("tool_use");
      expect(assistant.content.map((block) => block.type)).toEqual(["thinking", "tool_use"]);
      const toolUse = assistant.content[1] as Anthropic.ToolUseBlock;
      expect(toolUse.name).toBe("weather");
      expect(toolUse.input).toEqual({ location: "Paris" });

      // Claude Code's way: the assistant turn sent back whole, thinking block included
      const withThinking = await client.messages.create(secondTurn(params, assistant.content as Anthropic.ContentBlockParam[], toolUse.id));
      expect(withThinking.stop_reason).toBe("end_turn");
      expect((withThinking.content.at(-1) as Anthropic.TextBlock).text).toContain("18°C and sunny");

      // a client that drops its thinking blocks: the stored turn is found by its tool call
      const withoutThinking = await client.messages.create(
        secondTurn(params, assistant.content.filter((block) => block.type !== "thinking") as Anthropic.ContentBlockParam[], toolUse.id),
      );
      expect(withoutThinking.stop_reason).toBe("end_turn");
      // both went upstream with the first turn's reasoning, verbatim (the emulator refuses anything else)
      const reasoning = (assistant.content[0] as Anthropic.ThinkingBlock).thinking;
      for (const request of upstream.requests.slice(-2))
        expect(request.messages.find((message) => message.role === "assistant")?.reasoning_content).toBe(reasoning);
      expect(upstream.statuses.slice(-3)).toEqual([200, 200, 200]);
    });
  }

  test("the second turn continues the first one's session, which X-Session-Id names in every answer", async () => {
    const { params, assistant } = await firstTurn(false);
    const toolUse = assistant.content[1] as Anthropic.ToolUseBlock;
    const first = await client.messages.create(params).withResponse();
    const firstUse = first.data.content[1] as Anthropic.ToolUseBlock;
    const second = await client.messages.create(secondTurn(params, first.data.content as Anthropic.ContentBlockParam[], firstUse.id)).withResponse();
    const session = first.response.headers.get("x-session-id");
    expect(session).toMatch(/^sess_/);
    expect(second.response.headers.get("x-session-id")).toBe(session);
    expect(firstUse.id).not.toBe(toolUse.id);
  });

  test("X-Session-Id names the session the turn is stored in", async () => {
    const { params } = await firstTurn(false);
    const named = await client.messages.create(params, { headers: { "x-session-id": "claude-code-session-1" } }).withResponse();
    expect(named.response.headers.get("x-session-id")).toBe("claude-code-session-1");
    expect((await storageOf(gateway).sessions.list({ limit: 1000 })).some((session) => session.id === "claude-code-session-1")).toBe(true);
  });

  test("the thinking block's signature is the turn's envelope: resent after the session is gone, it alone brings the reasoning back verbatim", async () => {
    const { params, assistant, sessionId } = await firstTurn(true);
    const thinking = assistant.content[0] as Anthropic.ThinkingBlock;
    expect(thinking.signature).toMatch(/^cd1\./);
    const toolUse = assistant.content[1] as Anthropic.ToolUseBlock;
    expect(await storageOf(gateway).sessions.remove(sessionId)).toBe(true);
    const answer = await client.messages.create(secondTurn(params, assistant.content as Anthropic.ContentBlockParam[], toolUse.id));
    expect(answer.stop_reason).toBe("end_turn");
    expect(upstream.requests.at(-1)!.messages.find((message) => message.role === "assistant")?.reasoning_content).toBe(thinking.thinking);
    // the control: without its thinking block nothing brings the reasoning back, and the upstream refuses the turn
    const dropped = client.messages.create(secondTurn(params, [toolUse], toolUse.id));
    await expect(dropped).rejects.toBeInstanceOf(Anthropic.BadRequestError);
  });

  test("a thinking block sealed for another model is never sent to this one", async () => {
    const { params, assistant, sessionId } = await firstTurn(false);
    const toolUse = assistant.content[1] as Anthropic.ToolUseBlock;
    expect(await storageOf(gateway).sessions.remove(sessionId)).toBe(true);
    const elsewhere = client.messages.create({
      ...secondTurn(params, assistant.content as Anthropic.ContentBlockParam[], toolUse.id),
      model: "other-reasoner",
    });
    await expect(elsewhere).rejects.toBeInstanceOf(Anthropic.BadRequestError);
    const sent = upstream.requests.at(-1)!;
    expect(sent.model).toBe("deepseek-v4-flash");
    expect(sent.messages.find((message) => message.role === "assistant")?.reasoning_content).not.toBe(
      (assistant.content[0] as Anthropic.ThinkingBlock).thinking,
    );
  });
});

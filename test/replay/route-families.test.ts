import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { familyRoutes, WEATHER_TOOL } from "../support/family-routes.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { startOpenAIUpstream, type OpenAIUpstream } from "../support/openai-upstream.js";
import { ask, assistantsOf, carriersOf, type Message } from "../support/stateless-client.js";

let upstream: OpenAIUpstream;
let gateway: TestGateway;
beforeAll(async () => {
  upstream = await startOpenAIUpstream();
  gateway = await startTestGateway({ routes: familyRoutes(upstream) });
});
afterAll(async () => {
  await gateway.stop();
  await upstream.close();
});

/** What each family's route lets through (shipped routes.yaml). */
const FAMILIES: Record<string, string[]> = {
  mistral: [],
  groq: [],
  cerebras: [],
  fireworks: ["reasoning_content"],
  openrouter: ["reasoning_content", "reasoning", "reasoning_details"],
  novita: ["reasoning_content", "reasoning_details"],
  deepseek: ["reasoning_content"],
  kimi: ["reasoning_content"],
  mimo: ["reasoning_content"],
  zai: ["reasoning_content"],
  local: ["reasoning_content", "reasoning"],
};

/** The field each family answers its reasoning in: a carried route's client gets it there, as the upstream sent it. */
const ANSWER_FIELD: Record<string, string> = {
  mistral: "thinking",
  groq: "reasoning",
  cerebras: "reasoning",
  openrouter: "reasoning",
  local: "reasoning",
};

/**
 * A stateless client runs a tool loop (tool call → tool result → answer →
 * follow-up), never sending reasoning back. Every upstream must accept every
 * request, and see exactly the carriers its route allows, holding the
 * reasoning it produced itself.
 */
describe.each(Object.entries(FAMILIES))("%s", (flavor, fields) => {
  test.each([false, true])("stream=%s: a stateless tool loop gets its reasoning replayed, and only the fields the route allows", async (stream) => {
    const model = `${flavor}/model-${stream ? "s" : "n"}`;
    const before = upstream.requestsFor(flavor).length;
    const history: Message[] = [
      { role: "system", content: "You are a helpful assistant" },
      { role: "user", content: `Weather in Florence? (${model})` },
    ];
    const first = await ask(gateway, { model, stream, messages: history, tools: [WEATHER_TOOL] });
    expect(first.status, JSON.stringify(first.error)).toBe(200);
    expect(first.sessionId).toBeTruthy();
    history.push(first.kept, { role: "tool", tool_call_id: (first.kept.tool_calls as { id: string }[])[0]!.id, content: "40 C" });

    const second = await ask(gateway, { model, stream, messages: history, tools: [WEATHER_TOOL] });
    expect(second.status, JSON.stringify(second.error)).toBe(200);
    expect(second.sessionId).toBe(first.sessionId);
    history.push(second.kept, { role: "user", content: "Thanks!" });

    const third = await ask(gateway, { model, stream, messages: history, tools: [WEATHER_TOOL] });
    expect(third.status, JSON.stringify(third.error)).toBe(200);
    expect(third.sessionId).toBe(first.sessionId);

    const requests = upstream.requestsFor(flavor).slice(before);
    expect(requests.map((request) => request.status)).toEqual([200, 200, 200]);
    const [toolTurn, textTurn] = assistantsOf(requests[2]!.body);
    expect(carriersOf(assistantsOf(requests[1]!.body)[0]!).sort()).toEqual([...fields].sort());
    expect(carriersOf(toolTurn!).sort()).toEqual([...fields].sort());
    expect(carriersOf(textTurn!).sort()).toEqual([...fields].sort());
    for (const [turn, reasoning] of [
      [toolTurn!, first.reasoning],
      [textTurn!, second.reasoning],
    ] as const) {
      expect(reasoning).toMatch(/^Step \d+: /);
      expect([first.reasoningField, second.reasoningField]).toEqual(Array(2).fill(ANSWER_FIELD[flavor] ?? "reasoning_content"));
      if (fields.includes("reasoning_content")) expect(turn.reasoning_content).toBe(reasoning);
      if (fields.includes("reasoning")) expect(turn.reasoning).toBe(reasoning);
      if (fields.includes("reasoning_details")) {
        const details = turn.reasoning_details as Record<string, unknown>[];
        expect(details.map((detail) => detail.type)).toEqual(["reasoning.text", "reasoning.encrypted"]);
        expect(details[0]!.text).toBe(reasoning);
        expect(details[0]!.signature).toBe(`sig-${flavor}-${/^Step (\d+)/.exec(reasoning)![1]}-${Buffer.from(reasoning).toString("base64")}`);
      }
    }
    if (flavor === "zai") expect(requests[1]!.body.thinking).toEqual({ type: "enabled", clear_thinking: false });
  });
});

describe("must_echo (DeepSeek, Kimi, MiMo)", () => {
  test.each(["deepseek", "kimi", "mimo"])("%s: a tool-call turn with nothing stored gets a single space; a bare text turn gets nothing", async (flavor) => {
    const before = upstream.requestsFor(flavor).length;
    const result = await ask(gateway, {
      model: `${flavor}/echo`,
      messages: [
        { role: "user", content: "first" },
        { role: "assistant", content: null, tool_calls: [{ id: `foreign_${flavor}_1`, type: "function", function: { name: "weather", arguments: "{}" } }] },
        { role: "tool", tool_call_id: `foreign_${flavor}_1`, content: "sunny" },
        { role: "assistant", content: "It is sunny (answered elsewhere)." },
        { role: "user", content: "and tomorrow?" },
      ],
    });
    expect(result.status, JSON.stringify(result.error)).toBe(200);
    const [toolTurn, textTurn] = assistantsOf(upstream.requestsFor(flavor)[before]!.body);
    expect(toolTurn!.reasoning_content).toBe(" ");
    expect(textTurn).not.toHaveProperty("reasoning_content");
  });

  test("without replay the emulator really rejects: an empty string is not a placeholder", async () => {
    const result = await ask(gateway, {
      model: "deepseek/echo",
      model_options: { replay: false },
      messages: [
        { role: "user", content: "first" },
        { role: "assistant", content: null, tool_calls: [{ id: "foreign_x", type: "function", function: { name: "weather", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "foreign_x", content: "sunny" },
      ],
    });
    expect(result.status).toBe(400);
    expect(result.error!.message).toBe("The `reasoning_content` in the thinking mode must be passed back to the API.");
  });
});

describe("what the client sends", () => {
  test("carrier fields a strict route cannot read are stripped, including ones the client sent itself", async () => {
    const before = upstream.requestsFor("mistral").length;
    const result = await ask(gateway, {
      model: "mistral/magistral",
      messages: [
        { role: "user", content: "hi" },
        {
          role: "assistant",
          content: "hello",
          reasoning_content: "client kept this",
          reasoning: "and this",
          reasoning_details: [{ type: "reasoning.text", text: "x" }],
          native_record: { forged: true },
        },
        { role: "user", content: "again" },
      ],
    });
    expect(result.status, JSON.stringify(result.error)).toBe(200);
    expect(carriersOf(assistantsOf(upstream.requestsFor("mistral")[before]!.body)[0]!)).toEqual([]);
  });

  test("stored wins over a client-sent value; a client value is used when nothing is stored", async () => {
    const history: Message[] = [{ role: "user", content: "Weather in Rome?" }];
    const first = await ask(gateway, { model: "deepseek/stored-wins", messages: history, tools: [WEATHER_TOOL] });
    const toolId = (first.kept.tool_calls as { id: string }[])[0]!.id;
    history.push({ ...first.kept, reasoning_content: "a client-side rewrite" }, { role: "tool", tool_call_id: toolId, content: "20 C" });
    history.push({ role: "assistant", content: "kept by the client only", reasoning_content: "client-only reasoning" }, { role: "user", content: "ok" });
    const before = upstream.requestsFor("deepseek").length;
    const second = await ask(gateway, { model: "deepseek/stored-wins", messages: history, tools: [WEATHER_TOOL] });
    expect(second.status, JSON.stringify(second.error)).toBe(200);
    const [stored, clientOnly] = assistantsOf(upstream.requestsFor("deepseek")[before]!.body);
    expect(stored!.reasoning_content).toBe(first.reasoning);
    expect(clientOnly!.reasoning_content).toBe("client-only reasoning");
  });

  test("plain reasoning crosses providers where fields allow; signed reasoning_details do not", async () => {
    const history: Message[] = [{ role: "user", content: "Weather in Pisa?" }];
    const first = await ask(gateway, { model: "openrouter/anthropic/claude-haiku-4.5", messages: history, tools: [WEATHER_TOOL] });
    history.push(first.kept, { role: "tool", tool_call_id: (first.kept.tool_calls as { id: string }[])[0]!.id, content: "30 C" });
    const toNovita = upstream.requestsFor("novita").length;
    const crossed = await ask(gateway, { model: "novita/other-model", messages: history, tools: [WEATHER_TOOL] });
    expect(crossed.status, JSON.stringify(crossed.error)).toBe(200);
    const [turn] = assistantsOf(upstream.requestsFor("novita")[toNovita]!.body);
    expect(turn!.reasoning_content).toBe(first.reasoning);
    expect(turn).not.toHaveProperty("reasoning_details");
    // the same model family on the same plugin does get the signed array
    const toOpenrouter = upstream.requestsFor("openrouter").length;
    await ask(gateway, { model: "openrouter/anthropic/claude-haiku-4.5:thinking", messages: history, tools: [WEATHER_TOOL] });
    expect((assistantsOf(upstream.requestsFor("openrouter")[toOpenrouter]!.body)[0]!.reasoning_details as unknown[]).length).toBe(2);
  });

  test("X-Session-Id continues a session by position when the client re-rendered the text", async () => {
    const sessionHeader = { "x-session-id": "explicit.session-1" };
    const history: Message[] = [{ role: "user", content: "hello" }];
    const first = await ask(gateway, { model: "fireworks/m", messages: history }, sessionHeader);
    expect(first.sessionId).toBe("explicit.session-1");
    history.push({ role: "assistant", content: `**${String(first.kept.content)}**` }, { role: "user", content: "more" });
    const before = upstream.requestsFor("fireworks").length;
    const second = await ask(gateway, { model: "fireworks/m", messages: history }, sessionHeader);
    expect(second.sessionId).toBe("explicit.session-1");
    expect(assistantsOf(upstream.requestsFor("fireworks")[before]!.body)[0]!.reasoning_content).toBe(first.reasoning);
  });

  test("a malformed X-Session-Id is a 400; a bad replay option is a 400", async () => {
    const bad = await ask(gateway, { model: "fireworks/m", messages: [{ role: "user", content: "x" }] }, { "x-session-id": "has space" });
    expect(bad.status).toBe(400);
    const option = await ask(gateway, { model: "fireworks/m", model_options: { replay: { omit: ["content"] } }, messages: [{ role: "user", content: "x" }] });
    expect(option.status).toBe(400);
    expect(option.error!.message).toContain("model_options.replay");
  });
});

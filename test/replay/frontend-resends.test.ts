import { randomBytes } from "node:crypto";
import { z, type ZodType } from "zod";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { captureLog } from "../support/captured-log.js";
import {
  FRONTENDS,
  aiSdk,
  libreChatCustom,
  lobeChat,
  opencode,
  openWebUi06,
  openWebUi07,
  type Answer,
  type Frontend,
  type Message,
  type Round,
} from "../support/frontends.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { startOpenAIUpstream, type OpenAIUpstream } from "../support/openai-upstream.js";
import { ask, carriersOf, type ClientTurn } from "../support/stateless-client.js";
import { sign, startAnthropicEmulator, type AnthropicEmulator } from "../plugins/emulators/anthropic-emulator.js";
import { SKIP, signPart, startGeminiEmulator } from "../plugins/emulators/gemini-emulator.js";
import type { Emulator } from "../plugins/emulators/http-emulator.js";

/**
 * Issue 21: a three-turn tool loop (question → tool call → tool result →
 * answer → follow-up) through each frontend's own rewriting of the history,
 * over a must_echo route, a strict route, Anthropic and Gemini. Turn 3's
 * upstream must receive, verbatim, the stored carriers of every assistant
 * message the frontend left identifiable; what it left unidentifiable goes
 * without, and is placed by X-Session-Id instead.
 */

const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const alnum = (length: number) => Array.from(randomBytes(length), (byte) => ALNUM[byte % ALNUM.length]).join("");
/** Tool-call ids as the providers mint them: DeepSeek `call_00_` + 24, Mistral 9 alphanumerics. */
const callId = (flavor: string) => (flavor === "mistral" ? alnum(9) : `call_00_${alnum(24)}`);

let upstream: OpenAIUpstream;
let anthropic: AnthropicEmulator;
let gemini: Emulator;
let gateway: TestGateway;
const log = captureLog();

beforeAll(async () => {
  upstream = await startOpenAIUpstream({ callId });
  anthropic = await startAnthropicEmulator({ apiKey: "sk-ant-test", redacted: true });
  gemini = await startGeminiEmulator({ apiKey: "gemini-test-key" });
  gateway = await startTestGateway({
    log: log.logger,
    env: { ANTHROPIC_API_KEY: "sk-ant-test", GEMINI_API_KEY: "gemini-test-key" },
    routes: `version: 1
providers:
  deepseek: { plugin: openai-compatible, base_url: "${upstream.baseUrl("deepseek")}" }
  mistral: { plugin: openai-compatible, base_url: "${upstream.baseUrl("mistral")}" }
  anthropic: { plugin: anthropic, base_url: "${anthropic.url}", api_key_env: ANTHROPIC_API_KEY }
  gemini: { plugin: gemini, base_url: "${gemini.url}", api_key_env: GEMINI_API_KEY }
models:
  - { name: "deepseek/*", provider: deepseek }
  - { name: "mistral/*", provider: mistral }
  - { name: claude-sonnet-4-5, provider: anthropic, model: claude-sonnet-4-5, params: { max_tokens: 16000, thinking: { type: enabled, budget_tokens: 8000 } } }
  - { name: gemini-3-pro-preview, provider: gemini, model: gemini-3-pro-preview, params: { generationConfig: { thinkingConfig: { includeThoughts: true } } } }
carriers:
  - match: { provider: mistral }
    fields: []
  - match: { provider: deepseek }
    fields: [reasoning_content]
    must_echo: true
  - match: {}
    fields: [reasoning_content]
`,
  });
});
afterAll(async () => {
  await gateway?.stop();
  await Promise.all([upstream?.close(), anthropic?.close(), gemini?.close()]);
});

type Body = Record<string, unknown>;

/** One route under test: where its upstream requests land, and how a stored carrier shows on an assistant message there. */
interface RouteCase {
  readonly name: string;
  readonly model: string;
  /** The tool the app offers (the emulator calls it with the keys this schema names); unit has a default the AI SDK fills. */
  readonly schema: ZodType;
  lastBody(): Body;
  /** The assistant messages of an upstream body, in order. */
  assistants(body: Body): Body[];
  /** Asserts that `message` carries the stored reasoning of `answer`, verbatim (or, where the provider signs it, signed as issued). */
  expectCarried(message: Body, answer: Answer): void;
  /** Asserts that `message` carries nothing stored (what a route does for a message it could not place). */
  expectNothingStored(message: Body, answer: Answer | undefined): void;
}

const withUnit = (key: "city" | "location") => z.object({ [key]: z.string(), unit: z.enum(["celsius", "fahrenheit"]).default("celsius") });
const openAiAssistants = (body: Body) => (body.messages as Body[]).filter((message) => message.role === "assistant");

const ROUTES: readonly RouteCase[] = [
  {
    name: "must_echo (DeepSeek-style)",
    model: "deepseek/deepseek-v4-flash",
    schema: withUnit("city"),
    lastBody: () => upstream.requestsFor("deepseek").at(-1)!.body,
    assistants: openAiAssistants,
    expectCarried(message, answer) {
      expect(message.reasoning_content).toBe(answer.reasoning);
      expect(String(message.content ?? "")).not.toContain("<think>");
    },
    expectNothingStored(message, answer) {
      // a tool-call turn gets the placeholder; a text turn nothing
      if ((message.tool_calls as unknown[] | undefined)?.length) expect(message.reasoning_content).toBe(" ");
      else expect(message).not.toHaveProperty("reasoning_content");
      void answer;
    },
  },
  {
    name: "strict (nothing extra)",
    model: "mistral/magistral-medium-2507",
    schema: withUnit("city"),
    lastBody: () => upstream.requestsFor("mistral").at(-1)!.body,
    assistants: openAiAssistants,
    expectCarried: (message) => expect(carriersOf(message)).toEqual([]),
    expectNothingStored: (message) => expect(carriersOf(message)).toEqual([]),
  },
  {
    name: "Anthropic",
    model: "claude-sonnet-4-5",
    schema: withUnit("location"),
    lastBody: () => anthropic.received.at(-1)!.body!,
    assistants: (body) => (body.messages as Body[]).filter((message) => message.role === "assistant"),
    expectCarried(message, answer) {
      const blocks = message.content as Body[];
      const thinking = blocks.find((block) => block.type === "thinking")!;
      expect(thinking.thinking).toBe(answer.reasoning);
      expect(thinking.signature).toBe(sign(answer.reasoning));
      // the signed thinking comes before what it led to, and no reasoning is left in the text
      expect(blocks.map((block) => block.type)).toEqual(answer.toolCalls.length > 0 ? ["redacted_thinking", "thinking", "tool_use"] : ["thinking", "text"]);
    },
    expectNothingStored(message) {
      expect((message.content as Body[]).map((block) => block.type)).not.toContain("thinking");
    },
  },
  {
    name: "Gemini",
    model: "gemini-3-pro-preview",
    schema: withUnit("location"),
    lastBody: () => gemini.received.at(-1)!.body!,
    assistants: (body) => (body.contents as Body[]).filter((content) => content.role === "model"),
    expectCarried(content, answer) {
      const parts = content.parts as Body[];
      const signed = parts.filter((part) => typeof part.thoughtSignature === "string");
      expect(signed.length).toBeGreaterThan(0);
      for (const part of signed) expect(part.thoughtSignature).toBe(signPart(part));
      if (answer.toolCalls.length > 0)
        expect(parts.find((part) => part.functionCall)!.thoughtSignature).toBe(signPart(parts.find((part) => part.functionCall)!));
    },
    expectNothingStored(content) {
      for (const part of content.parts as Body[]) if (part.thoughtSignature !== undefined) expect(part.thoughtSignature).toBe(SKIP);
    },
  },
];

/**
 * Which assistant messages of turn 3 a frontend leaves identifiable on a
 * route (true) or not, and by which key the debug line counts them. The AI
 * SDK and opencode reshape arguments through the tool's schema, so a
 * tool-call turn is found by its ids alone, and only where the provider's
 * ids are long and random (DeepSeek's, Anthropic's; not Mistral's nine
 * characters nor Gemini's eight). Open WebUI 0.6 merges the UI turn into
 * one text message: nothing to find.
 */
function expectation(frontend: Frontend, route: RouteCase): { identifiable: boolean[]; matched: Record<string, number> } {
  if (frontend === openWebUi06) return { identifiable: [false], matched: { assistant: 1, fingerprint: 0, ids: 0, position: 0, elsewhere: 0 } };
  if (frontend === aiSdk || frontend === opencode) {
    const byIds = route.model.startsWith("deepseek") || route.model.startsWith("claude");
    return { identifiable: [byIds, true], matched: { assistant: 2, fingerprint: 1, ids: byIds ? 1 : 0, position: 0, elsewhere: 0 } };
  }
  return { identifiable: [true, true], matched: { assistant: 2, fingerprint: 2, ids: 0, position: 0, elsewhere: 0 } };
}

function answerOf(turn: ClientTurn): Answer {
  expect(turn.status, JSON.stringify(turn.error)).toBe(200);
  const calls = (turn.kept.tool_calls as { id: string; function: { name: string; arguments: string } }[] | undefined) ?? [];
  return {
    text: typeof turn.kept.content === "string" ? turn.kept.content : "",
    reasoning: turn.reasoning,
    toolCalls: calls.map((call) => ({ id: call.id, name: call.function.name, arguments: call.function.arguments })),
  };
}

let conversation = 0;

interface Conversation {
  rounds: Round[];
  sessionIds: (string | null)[];
  turn2: Body;
  turn3: Body;
  turn3Messages: Message[];
  matched: unknown;
}

/** The loop as `frontend` runs it: turn 2 from its in-turn history, turn 3 from its stored one. */
async function converse(frontend: Frontend, route: RouteCase, stream: boolean, headers: Record<string, string> = {}): Promise<Conversation> {
  const n = ++conversation;
  const toolName = frontend.toolName("weather");
  const context = { model: route.model, schemas: { [toolName]: route.schema } };
  const tools = [{ type: "function", function: { name: toolName, description: "Get the weather", parameters: z.toJSONSchema(route.schema, { io: "input" }) } }];
  const user: Message = { role: "user", content: `Weather? (conversation ${n})` };
  const request = (messages: Message[]) => ask(gateway, { model: route.model, stream, tools, messages }, headers);

  const first = await request([user]);
  const answer1 = answerOf(first);
  expect(answer1.toolCalls.length).toBeGreaterThan(0);
  const round1: Round = {
    answer: answer1,
    results: answer1.toolCalls.map((call, index) => ({ id: call.id, name: call.name, content: `${10 + index} C, conversation ${n}` })),
  };

  const second = await request([user, ...frontend.inTurn(round1, context)]);
  const answer2 = answerOf(second);
  const turn2 = route.lastBody();
  const round2: Round = { answer: answer2, results: [] };

  const turn3Messages = [user, ...frontend.history([round1, round2], context), { role: "user", content: "Thanks!" }];
  const third = await request(turn3Messages);
  answerOf(third);
  const line = log.lines.filter((entry) => entry.message === "carriers attached" && entry.object.session_id === third.sessionId).at(-1);
  return {
    rounds: [round1, round2],
    sessionIds: [first.sessionId, second.sessionId, third.sessionId],
    turn2,
    turn3: route.lastBody(),
    turn3Messages,
    matched: line?.object.matched,
  };
}

describe.each(ROUTES)("$name", (route) => {
  describe.each(FRONTENDS.map((frontend) => [frontend.name, frontend] as const))("%s", (_name, frontend) => {
    test.each([false, true])("stream=%s: turn 3 upstream gets the stored carriers of every message left identifiable", async (stream) => {
      const run = await converse(frontend, route, stream);
      const { identifiable, matched } = expectation(frontend, route);
      // within its own tool loop, Open WebUI resends the tool-call turn as a message of its own; the others as they will later
      const toolTurnFound = frontend === openWebUi06 || identifiable[0]!;

      const [toolTurn] = route.assistants(run.turn2);
      if (toolTurnFound) route.expectCarried(toolTurn!, run.rounds[0]!.answer);
      else route.expectNothingStored(toolTurn!, run.rounds[0]!.answer);
      // a request none of whose assistant messages is found starts a session of its own
      expect(run.sessionIds[1] === run.sessionIds[0], "turn 2 continues turn 1's session").toBe(toolTurnFound);
      expect(run.sessionIds[2] === run.sessionIds[1], "turn 3 continues turn 2's session").toBe(identifiable.some(Boolean));

      const sent = route.assistants(run.turn3);
      expect(sent).toHaveLength(identifiable.length);
      identifiable.forEach((found, index) => {
        const answer = frontend === openWebUi06 ? undefined : run.rounds[index]!.answer;
        if (found) route.expectCarried(sent[index]!, answer!);
        else route.expectNothingStored(sent[index]!, answer);
      });
      expect(run.matched).toEqual(matched);
    });
  });

  test.each([openWebUi06, aiSdk].map((frontend) => [frontend.name, frontend] as const))(
    "%s with X-Session-Id: what no key finds is placed by its position in the session",
    async (_name, frontend) => {
      const { identifiable } = expectation(frontend, route);
      const unplaced = identifiable.filter((found) => !found).length;
      const sessionId = `frontend-${randomBytes(6).toString("hex")}`;
      const run = await converse(frontend, route, false, { "x-session-id": sessionId });
      expect(run.sessionIds).toEqual([sessionId, sessionId, sessionId]);
      expect(run.matched).toMatchObject({ assistant: identifiable.length, position: unplaced, elsewhere: 0 });
      if (frontend !== aiSdk || unplaced === 0) return;
      const placed = route.assistants(run.turn3)[0]!;
      if (route.name !== "Gemini") return route.expectCarried(placed, run.rounds[0]!.answer);
      // Gemini binds a signature to the call it signed: the call whose arguments the client reshaped goes back with the
      // documented skip value, every other signed part with its own signature
      const parts = placed.parts as Body[];
      expect(parts.find((part) => part.functionCall)!.thoughtSignature).toBe(SKIP);
      const signed = parts.filter((part) => !part.functionCall && typeof part.thoughtSignature === "string");
      for (const part of signed) expect(part.thoughtSignature).toBe(signPart(part));
    },
  );
});

describe("the emulations give the resends read from the frontends' code", () => {
  // one streamed turn: reasoning "R", text, one call; the tool says "Sunny, 20C"; then "It is sunny."
  const first: Round = {
    answer: { text: "Hello **world**.", reasoning: "R", toolCalls: [{ id: "call_abc123", name: "get_weather", arguments: '{"city":"Paris"}' }] },
    results: [{ id: "call_abc123", name: "get_weather", content: "Sunny, 20C" }],
  };
  const second: Round = { answer: { text: "It is sunny.", reasoning: "", toolCalls: [] }, results: [] };
  const context = { model: "some-model", schemas: {} };
  const call = (args: string, extra: Record<string, unknown> = {}) => [
    { ...extra, id: "call_abc123", type: "function", function: { name: "get_weather", arguments: args } },
  ];
  const tool = { role: "tool", tool_call_id: "call_abc123", content: "Sunny, 20C" };

  test("Open WebUI 0.6: in-turn <think> and json.dumps arguments; next request one merged text", () => {
    expect(openWebUi06.inTurn(first, context)).toEqual([
      { role: "assistant", content: "<think>R</think>\nHello **world**.", tool_calls: call('{"city": "Paris"}', { index: 0 }) },
      tool,
    ]);
    expect(openWebUi06.history([first, second], context)).toEqual([
      { role: "assistant", content: '\nHello **world**.\n"&quot;Sunny, 20C&quot;"\nIt is sunny.' },
    ]);
  });

  test("Open WebUI 0.7+, LibreChat, LobeChat, AI SDK", () => {
    expect(openWebUi07.history([first, second], context)).toEqual([
      { role: "assistant", content: "Hello **world**.", tool_calls: call('{"city": "Paris"}') },
      tool,
      { role: "assistant", content: "It is sunny." },
    ]);
    expect(libreChatCustom.history([first, second], context)).toEqual([
      { role: "assistant", content: "", tool_calls: call('{"city":"Paris"}') },
      { ...tool, name: "get_weather" },
      { role: "assistant", content: "It is sunny." },
    ]);
    expect(lobeChat.history([first, second], context)).toEqual([
      { role: "assistant", content: "Hello **world**.", tool_calls: call('{"city":"Paris"}') },
      { ...tool, name: "get_weather" },
      { role: "assistant", content: "It is sunny." },
    ]);
    expect(lobeChat.history([first], { ...context, model: "deepseek-chat" })[0]).toMatchObject({ reasoning_content: "R" });
    expect(aiSdk.history([first], context)).toEqual([
      { role: "assistant", content: "Hello **world**.", reasoning_content: "R", tool_calls: call('{"city":"Paris"}') },
      tool,
    ]);
  });
});

import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, expect, test } from "vitest";
import { captureLog } from "../support/captured-log.js";
import { familyRoutes, WEATHER_TOOL } from "../support/family-routes.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { startOpenAIUpstream, type OpenAIUpstream } from "../support/openai-upstream.js";
import { ask, assistantsOf, type Message } from "../support/stateless-client.js";

/**
 * pi switching wire mid-session (say from the Messages API to chat
 * completions) resends its earlier turns with their thinking turned into
 * visible text: the fingerprint of such a turn no longer matches what was
 * stored. A tool-call turn keeps its tool-call ids, and those find it
 * (docs/sessions-and-replay.md#how-a-request-finds-its-session): its stored
 * reasoning goes back to the must-echo upstream, never the placeholder.
 */
let upstream: OpenAIUpstream;
let gateway: TestGateway;
const log = captureLog();
beforeAll(async () => {
  // DeepSeek's own id shape (call_00_ + 24): random enough for the ids-and-names key
  upstream = await startOpenAIUpstream({ callId: () => `call_00_${randomBytes(18).toString("base64").replace(/[+/]/g, "x")}` });
  gateway = await startTestGateway({ routes: familyRoutes(upstream), log: log.logger });
});
afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
});

type Call = { id: string; type: string; function: { name: string; arguments: string } };

/** The turn as pi resends it after a wire switch: the thinking a text block before the answer's text, the calls unchanged. */
const asText = (kept: Message, reasoning: string, shape: "string" | "parts"): Message => ({
  role: "assistant",
  content:
    shape === "string"
      ? [reasoning, kept.content ?? ""].join("\n\n").trim()
      : [{ type: "text", text: reasoning }, ...(kept.content ? [{ type: "text", text: kept.content }] : [])],
  tool_calls: kept.tool_calls,
});

test.each([
  ["one text", "string", undefined],
  ["text parts", "parts", undefined],
  ["one text, explicit session", "string", "explicit"],
] as const)("a tool-call turn resent with its reasoning as %s is found by its call ids, its reasoning replayed", async (_, shape, session) => {
  const headers: Record<string, string> = session ? { "X-Session-Id": `pi-${randomBytes(6).toString("hex")}` } : {};
  const messages: Message[] = [{ role: "user", content: `Weather in Bologna? (${shape} ${session ?? "implicit"})` }];
  const first = await ask(gateway, { model: "deepseek/chat", tools: [WEATHER_TOOL], messages }, headers);
  expect(first.status, JSON.stringify(first.error)).toBe(200);
  expect(first.reasoning).not.toBe("");
  const calls = first.kept.tool_calls as Call[];
  expect(calls).toHaveLength(1);

  const before = upstream.requestsFor("deepseek").length;
  messages.push(asText(first.kept, first.reasoning, shape), { role: "tool", tool_call_id: calls[0]!.id, content: "21 C" });
  const second = await ask(gateway, { model: "deepseek/chat", tools: [WEATHER_TOOL], messages }, headers);
  expect(second.status, JSON.stringify(second.error)).toBe(200);
  expect(second.sessionId).toBe(first.sessionId);
  const sent = upstream.requestsFor("deepseek")[before]!;
  const [toolTurn] = assistantsOf(sent.body);
  expect(toolTurn!.reasoning_content).toBe(first.reasoning);
  expect((toolTurn!.tool_calls as Call[]).map((call) => call.id)).toEqual([calls[0]!.id]);
  // found by its ids and names: its fingerprint (text and calls) is not the stored one
  const attached = log.lines.filter((line) => line.message === "carriers attached" && line.object.session_id === second.sessionId).at(-1)!;
  expect(attached.object.matched).toMatchObject({ assistant: 1, fingerprint: 0, ids: 1 });
});

test("the same through the Messages API: a chat turn resent as a text block before its tool_use is found by the call id", async () => {
  const messages: Message[] = [{ role: "user", content: "Weather in Ferrara? (chat, then messages)" }];
  const first = await ask(gateway, { model: "deepseek/chat", tools: [WEATHER_TOOL], messages });
  expect(first.status, JSON.stringify(first.error)).toBe(200);
  const call = (first.kept.tool_calls as Call[])[0]!;

  const before = upstream.requestsFor("deepseek").length;
  const response = await gateway.post("/v1/messages", {
    model: "deepseek/chat",
    max_tokens: 1024,
    tools: [{ name: "weather", description: "Get weather information for a location", input_schema: WEATHER_TOOL.function.parameters }],
    messages: [
      { role: "user", content: "Weather in Ferrara? (chat, then messages)" },
      {
        role: "assistant",
        content: [
          { type: "text", text: first.reasoning },
          { type: "tool_use", id: call.id, name: call.function.name, input: JSON.parse(call.function.arguments) as unknown },
        ],
      },
      { role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: "19 C" }] },
    ],
  });
  expect(response.status, await response.clone().text()).toBe(200);
  const [toolTurn] = assistantsOf(upstream.requestsFor("deepseek")[before]!.body);
  expect(toolTurn!.reasoning_content).toBe(first.reasoning);
});

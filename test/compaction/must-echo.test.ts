import "reflect-metadata";
import { afterAll, afterEach, beforeAll, expect, test } from "vitest";
import { SpecWatch } from "../support/open-responses.js";
import type { GatewayEvent } from "../../src/foundation/event-bus/event-bus.js";
import { ECHO_PLACEHOLDER } from "../../src/routing/carriers/shape-messages.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { collectCompactions, respond, showSession } from "./support/harness.js";
import { startOpenAIUpstream, type ChatBody, type OpenAIUpstream } from "../support/openai-upstream.js";

/**
 * DeepSeek's thinking mode with tools: every assistant tool-call turn must
 * come back with its `reasoning_content` on every later request, or the
 * answer is a 400 (hermes-agent once lost it in compaction). A long
 * Responses tool loop compacts several times on a must-echo route; every
 * request must still be accepted.
 */
let upstream: OpenAIUpstream;
let gateway: TestGateway;
let compactions: GatewayEvent[];

beforeAll(async () => {
  upstream = await startOpenAIUpstream({ echo: "own-calls", reasoningChars: 1500 });
  gateway = await startTestGateway({
    spec,
    routes: `version: 1
providers:
  demo: { plugin: demo }
  deepseek: { plugin: openai-compatible, base_url: "${upstream.baseUrl("deepseek")}" }
models:
  - { name: demo, provider: demo, model: demo-reasoner }
  - { name: deepseek-chat, provider: deepseek, model: deepseek-v4, context_window: 8000, summarizer: demo }
carriers:
  - match: { provider: deepseek }
    fields: [reasoning_content]
    must_echo: true
  - match: {}
    fields: [reasoning_content]
`,
  });
  compactions = collectCompactions(gateway);
});
// every /v1/responses answer here is checked against the Open Responses spec
const spec = new SpecWatch();
afterEach(() => spec.verify());
afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
});

const tools = [
  { type: "function", name: "lookup", description: "Look a value up", parameters: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] } },
];

/** Upstream requests sent right after a compaction, with the input kind of the Responses request that caused it. */
const compactedRequests: { body: ChatBody; input: "user" | "tool" }[] = [];
let sessionId = "";

test("a tool loop compacts several times on a must-echo route and every request is accepted", async () => {
  let previous: string | undefined;
  const step = async (input: unknown, kind: "user" | "tool") => {
    const before = compactions.length;
    const result = await respond(gateway, { model: "deepseek-chat", tools, input, ...(previous ? { previous_response_id: previous } : {}) });
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    previous = result.body.id;
    sessionId = result.sessionId;
    if (compactions.length > before) compactedRequests.push({ body: upstream.received.at(-1)!.body, input: kind });
    return result;
  };
  for (let cycle = 1; cycle <= 16; cycle++) {
    const asked = await step(`Look up item ${cycle}`, "user");
    const call = asked.body.output.find((item) => item.type === "function_call");
    expect(call, "the model called the tool").toBeDefined();
    // one bulky tool result pushes its own request over the budget: that compaction happens on a tool-result input
    const output = cycle === 4 ? `item ${cycle} is ${"long value ".repeat(1600)}` : `item ${cycle} is ${cycle * 7}`;
    await step([{ type: "function_call_output", call_id: call!.call_id, output }], "tool");
  }
  expect(compactions.length).toBeGreaterThanOrEqual(2);
  expect(upstream.received.every((request) => request.status === 200)).toBe(true);
});

test("after compaction the retained tool-call turns carry their real reasoning_content, never the placeholder", () => {
  let toolCallTurns = 0;
  for (const { body } of compactedRequests) {
    for (const message of body.messages) {
      if (message.role !== "assistant" || !message.tool_calls?.length) continue;
      toolCallTurns++;
      expect(message.reasoning_content).not.toBe(ECHO_PLACEHOLDER);
      expect(message.reasoning_content).toBe(upstream.issuedFor(message.tool_calls[0]!.id)!.reasoning);
    }
  }
  expect(toolCallTurns).toBeGreaterThan(0);
});

test("no compaction separates a tool result from its call, also when the new input is the tool result", () => {
  for (const { body } of compactedRequests) {
    const called = new Set<string>();
    for (const message of body.messages) {
      for (const call of message.tool_calls ?? []) called.add(call.id);
      if (message.role === "tool") expect(called.has(String(message.tool_call_id))).toBe(true);
    }
  }
  const onToolInput = compactedRequests.filter((request) => request.input === "tool");
  expect(onToolInput.length).toBeGreaterThan(0);
  for (const { body } of onToolInput) {
    // the call the new tool result answers stayed, right before it, with its reasoning
    const [call, result] = body.messages.slice(-2);
    expect(result!.role).toBe("tool");
    expect(call!.tool_calls?.[0]?.id).toBe(result!.tool_call_id);
    expect(call!.reasoning_content).toBe(upstream.issuedFor(String(result!.tool_call_id))!.reasoning);
  }
});

test("each compaction supersedes the one before: one checkpoint remains, and its summary rolls the earlier one up", async () => {
  for (let index = 1; index < compactions.length; index++) expect(compactions[index]!.superseded_checkpoint).toBe(compactions[index - 1]!.checkpoint_id);
  const shown = await showSession(gateway, sessionId);
  expect(shown.checkpoints.map((checkpoint) => checkpoint.id)).toEqual([compactions.at(-1)!.checkpoint_id]);
  // the summariser was given the previous summary first (the demo model echoes the start of what it is given)
  expect(shown.checkpoints[0]!.summary).toContain("Earlier summary");
});

import { afterEach, describe, expect, test } from "vitest";
import { loadCassette, startOpenAIUpstream, type Interaction, type OpenAIUpstream } from "../support/openai-upstream.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { ask, assistantsOf, CARRIER_KEYS } from "../support/stateless-client.js";

/**
 * Real recorded conversations, replayed through the daemon: turn 1 as
 * recorded, then turn 2 from a stateless client that resends the history
 * with every reasoning field dropped. The upstream must receive the carriers
 * the provider produced in turn 1 — verbatim, signatures and order included —
 * which is what the recorded, provider-accepted turn-2 request held.
 */

const OPENROUTER = "[reasoning_content, reasoning, reasoning_details]";
const CASES: { cassette: string; fields: string }[] = [
  ...["thinking", "thinking-streaming"].map((name) => ({ cassette: `TestOpenRouterThinking/anthropic/${name}`, fields: OPENROUTER })),
  ...["anthropic", "gemini", "glm", "grok", "kimi", "openai"].flatMap((model) =>
    ["tool", "tool_streaming"].map((name) => ({ cassette: `TestOpenRouterCommon/${model}/${name}`, fields: OPENROUTER })),
  ),
  ...["thinking", "thinking-streaming"].map((name) => ({ cassette: `TestOpenAICompatibleThinking/zai-glm-4-7-flash/${name}`, fields: "[reasoning_content]" })),
  ...["thinking", "thinking-streaming"].map((name) => ({ cassette: `TestOpenAICompatibleThinking/xai-grok-3-mini/${name}`, fields: "[reasoning_content]" })),
  ...["thinking", "thinking-streaming"].map((name) => ({
    cassette: `TestOpenAICompatibleThinking/llama-cpp-gpt-oss/${name}`,
    fields: "[reasoning_content, reasoning]",
  })),
  { cassette: "TestOpenAICompatibleThinking/avian-kimi/thinking-streaming", fields: "[reasoning_content]" },
];

/**
 * Where the recording client (fantasy) did not send back what the provider
 * produced, the recorded turn 2 is not the verbatim replay and carrierd is
 * held to the provider's own turn-1 output instead:
 * - its stream accumulator dropped the first `reasoning_details` text fragment;
 * - for xAI it replaced the `reasoning.summary` + `reasoning.encrypted` items with a text-less `reasoning.text`.
 */
const RECORDER_DEVIATIONS = new Set([
  "TestOpenRouterCommon/glm/tool_streaming",
  "TestOpenRouterCommon/kimi/tool_streaming",
  "TestOpenRouterCommon/grok/tool",
  "TestOpenRouterCommon/grok/tool_streaming",
]);

let upstream: OpenAIUpstream | undefined;
let gateway: TestGateway | undefined;
afterEach(async () => {
  await gateway?.stop();
  await upstream?.close();
});

describe.each(CASES)("$cassette", ({ cassette, fields }) => {
  test("a stateless client's turn 2 reaches the upstream with the provider's own carriers", async () => {
    const interactions = loadCassette(cassette);
    upstream = await startOpenAIUpstream({ answers: { kind: "cassette", interactions } });
    gateway = await startTestGateway({
      routes: `version: 1
providers:
  recorded: { plugin: openai-compatible, base_url: "${upstream.baseUrl("recorded")}" }
models:
  - { name: "rec/*", provider: recorded }
carriers:
  - match: { provider: recorded }
    fields: ${fields}
`,
    });
    const [turnOne, turnTwo] = interactions.map(
      (interaction) => JSON.parse(interaction.request.body) as { model: string; messages: Record<string, unknown>[] },
    );
    const first = await ask(gateway, { ...turnOne, model: `rec/${turnOne!.model}` });
    expect(first.status, JSON.stringify(first.error)).toBe(200);

    const statelessHistory = turnTwo!.messages.map((message) => (message.role === "assistant" ? withoutCarriers(message) : message));
    const second = await ask(gateway, { ...turnTwo, model: `rec/${turnTwo!.model}`, messages: statelessHistory });
    expect(second.status, JSON.stringify(second.error)).toBe(200);
    expect(second.sessionId).toBe(first.sessionId);

    const sent = upstream.received[1]!.body;
    // nothing but the carriers differs from the recorded request's messages
    expect(sent.messages.map(withoutCarriers)).toEqual(turnTwo!.messages.map(withoutCarriers));
    const [sentTurn] = assistantsOf(sent);
    const [recordedTurn] = assistantsOf(turnTwo!);
    const produced = producedCarriers(interactions[0]!);
    const allowed = fields.slice(1, -1).split(", ");
    const expected: Record<string, unknown> = {};
    if (produced.text && allowed.includes("reasoning_content")) expected.reasoning_content = produced.text;
    if (produced.text && allowed.includes("reasoning")) expected.reasoning = produced.text;
    if (produced.details && allowed.includes("reasoning_details")) expected.reasoning_details = produced.details;
    expect(carriers(sentTurn!)).toEqual(expected);
    if (!RECORDER_DEVIATIONS.has(cassette)) {
      // every carrier the recorded, provider-accepted request held, byte for byte and in order
      for (const [field, value] of Object.entries(carriers(recordedTurn!))) expect(sentTurn![field], field).toEqual(value);
    }
  });
});

function withoutCarriers(message: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(message).filter(([key]) => !CARRIER_KEYS.includes(key)));
}

function carriers(message: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(message).filter(([key]) => CARRIER_KEYS.includes(key)));
}

/**
 * What the provider produced in turn 1, read straight from the recording:
 * the message's fields when whole; when streamed, text fragments
 * concatenated and `reasoning_details` fragments merged by index and type
 * (docs/sessions-and-replay.md#what-is-stored) — written out here independently of the daemon's accumulator.
 */
function producedCarriers(interaction: Interaction): { text: string; details: Record<string, unknown>[] | undefined } {
  const body = interaction.response.body;
  const contentType = interaction.response.headers["Content-Type"]?.[0] ?? "";
  if (!contentType.includes("event-stream")) {
    const message = JSON.parse(body.trim()).choices[0].message as Record<string, unknown>;
    const details = message.reasoning_details as Record<string, unknown>[] | undefined;
    return { text: String(message.reasoning_content || message.reasoning || ""), details: details?.length ? details : undefined };
  }
  let text = "";
  const details: Record<string, unknown>[] = [];
  for (const line of body.split("\n")) {
    if (!line.startsWith("data:") || line.includes("[DONE]")) continue;
    const delta = (JSON.parse(line.slice(5)).choices?.[0]?.delta ?? {}) as Record<string, unknown>;
    text += (delta.reasoning_content || delta.reasoning || "") as string;
    for (const fragment of (delta.reasoning_details as Record<string, unknown>[] | undefined) ?? []) {
      const same = details.findLast((kept) => kept.index === fragment.index && kept.type === fragment.type);
      if (!same) {
        details.push({ ...fragment });
        continue;
      }
      for (const [key, value] of Object.entries(fragment)) {
        if ((key === "text" || key === "summary") && typeof value === "string") same[key] = String(same[key] ?? "") + value;
        else if (value !== null && (same[key] === undefined || same[key] === null || same[key] === "")) same[key] = value;
      }
    }
  }
  return { text, details: details.length ? details : undefined };
}

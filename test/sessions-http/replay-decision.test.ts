import "reflect-metadata";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { WEATHER_TOOL } from "../support/family-routes.js";
import { afterGatewayCommits, storageOf, TEST_KEY } from "../support/gateway.js";
import { startOpenAIUpstream, type OpenAIUpstream } from "../support/openai-upstream.js";
import { announceSkipped } from "../support/postgres.js";
import {
  BACKENDS,
  chat,
  expectValid,
  getJson,
  historyRoutes,
  kept,
  sessionValidators,
  skipBackend,
  STRICT_REASONING,
  type Backend,
} from "./history-support.js";

announceSkipped("test/sessions-http/replay-decision.test.ts", 6);

/**
 * GET /v1/sessions/{id} shows what replay decided for each turn when it was
 * stored (docs/api.md#get-v1sessionsid): a real two-turn tool conversation
 * through a DeepSeek-like upstream, a must_echo placeholder, a field an
 * upstream refused (the retry, then the verdict), and signed or encrypted
 * reasoning listed by size only. Every answer is checked against
 * schemas/sessions/session.schema.json.
 */
type Turn = { position: number; replay: Record<string, unknown> | null; carriers: Record<string, unknown>[]; [key: string]: unknown };

describe.each(Object.keys(BACKENDS))("the replay decision of each turn: %s", (backendName) => {
  const skip = skipBackend(backendName);
  const validators = sessionValidators();
  let upstream: OpenAIUpstream;
  let backend: Backend;

  beforeAll(async () => {
    if (skip) return;
    // tool-call ids random enough to be a key of their own (call-ids.ts), as real providers issue them
    upstream = await startOpenAIUpstream({ strict: STRICT_REASONING, callId: (flavor, n) => `call_${flavor}_Q7vLx2Rt9KmWp4Zs${n}` });
    backend = await BACKENDS[backendName]!(historyRoutes(upstream));
  });
  afterAll(async () => {
    await backend?.stop();
    await upstream?.close();
  });

  const show = async (id: string): Promise<{ status: number; body: Record<string, unknown>; turns: Turn[] }> => {
    await afterGatewayCommits(backend.gateway);
    const { status, body } = await getJson(backend.gateway, TEST_KEY, `/v1/sessions/${encodeURIComponent(id)}`);
    if (status === 200) expectValid(validators.session, body);
    return { status, body, turns: (body.turns as Turn[] | undefined) ?? [] };
  };

  test.skipIf(skip)("a two-turn tool conversation: turn 2 found turn 1 by its fingerprint and sent its reasoning back as reasoning_content", async () => {
    const model = "deepseek/deepseek-reasoner";
    const history: Record<string, unknown>[] = [{ role: "user", content: "What is the weather in Paris?" }];
    const first = await chat(backend.gateway, TEST_KEY, { model, messages: history, tools: [WEATHER_TOOL] });
    expect(first.status).toBe(200);
    expect(first.message.tool_calls).toHaveLength(1);
    const callId = (first.message.tool_calls as { id: string }[])[0]!.id;
    // a stateless client: the tool call without its reasoning, then the tool's result
    history.push(kept(first.message), { role: "tool", tool_call_id: callId, content: '{"temp":21}' });
    const second = await chat(backend.gateway, TEST_KEY, { model, messages: history, tools: [WEATHER_TOOL] });
    expect(second.status).toBe(200);
    expect(second.session).toBe(first.session);
    const sent = upstream.requestsFor("deepseek").at(-1)!.body.messages;
    expect(sent[1]!.reasoning_content).toBe(first.message.reasoning_content);

    const { turns } = await show(first.session!);
    expect(turns.map((turn) => turn.position)).toEqual([1, 2]);
    const [one, two] = turns as [Turn, Turn];
    expect(one).toMatchObject({ model, provider: "deepseek", route: 1, finish_reason: "tool_calls", reasoning: first.message.reasoning_content });
    expect(one.replay).toEqual({ effective: ["reasoning_content"], matched: [], attached: [], placeholders: [], left_out: [], retried: false });
    expect(two.prompt).toEqual([{ role: "tool", content: '{"temp":21}', tool_call_id: callId }]);
    expect(two.replay).toEqual({
      effective: ["reasoning_content"],
      matched: [{ message: 1, turn_id: one.id, position: 1, by: "fingerprint" }],
      attached: [{ message: 1, turn_id: one.id, position: 1, fields: ["reasoning_content"] }],
      placeholders: [],
      left_out: [],
      retried: false,
    });
    const timings = two.timings as Record<string, number | null>;
    expect(timings.upstream_ms).toBeGreaterThanOrEqual(0);
    expect(timings.total_ms).toBeGreaterThanOrEqual(timings.upstream_ms!);
    expect(timings.first_content_ms).not.toBeNull();
  });

  test.skipIf(skip)("a tool call resent with other arguments is matched by its call id; a re-rendered answer in a named session by its depth", async () => {
    const model = "deepseek/deepseek-reasoner";
    const ask = [{ role: "user", content: "Weather in Rome?" }];
    const first = await chat(backend.gateway, TEST_KEY, { model, messages: ask, tools: [WEATHER_TOOL] }, "named-session");
    const call = (first.message.tool_calls as { id: string; type: string; function: { name: string } }[])[0]!;
    // the same call id and name, its arguments reshaped by the client: no fingerprint matches it
    const reshaped = {
      role: "assistant",
      content: null,
      tool_calls: [{ ...call, function: { name: call.function.name, arguments: '{"city":"Rome","unit":"C"}' } }],
    };
    const history = [...ask, reshaped, { role: "tool", tool_call_id: call.id, content: '{"temp":18}' }];
    const second = await chat(backend.gateway, TEST_KEY, { model, messages: history, tools: [WEATHER_TOOL] }, "named-session");
    expect(second.status).toBe(200);
    // the answer re-rendered (other text, no reasoning): found at its depth in the named session
    history.push({ role: "assistant", content: `**${String(second.message.content)}**` }, { role: "user", content: "thanks" });
    const third = await chat(backend.gateway, TEST_KEY, { model, messages: history, tools: [WEATHER_TOOL] }, "named-session");
    expect(third.status).toBe(200);
    const { turns } = await show("named-session");
    expect(
      turns.map((turn) =>
        (turn.replay!.matched as { message: number; position: number; by: string }[]).map((entry) => [entry.message, entry.position, entry.by]),
      ),
    ).toEqual([
      [],
      [[1, 1, "call_id"]],
      [
        [1, 1, "call_id"],
        [3, 2, "depth"],
      ],
    ]);
  });

  test.skipIf(skip)("a tool-call turn carrierd never stored gets the must_echo placeholder, and the decision says so", async () => {
    const messages = [
      { role: "user", content: "Weather in Oslo?" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_foreign_9", type: "function", function: { name: "weather", arguments: '{"city":"Oslo"}' } }],
      },
      { role: "tool", tool_call_id: "call_foreign_9", content: '{"temp":-3}' },
    ];
    const answer = await chat(backend.gateway, TEST_KEY, { model: "deepseek/deepseek-reasoner", messages, tools: [WEATHER_TOOL] });
    expect(answer.status).toBe(200);
    expect(upstream.requestsFor("deepseek").at(-1)!.body.messages[1]!.reasoning_content).toBe(" ");
    const { turns } = await show(answer.session!);
    expect(turns[0]!.replay).toMatchObject({ matched: [], attached: [], placeholders: [1], left_out: [], retried: false });
  });

  test.skipIf(skip)("a field the upstream refused: turn 2 says it was rejected and retried, turn 3 that a verdict left it out", async () => {
    const model = "strictp/strict-model";
    const history: Record<string, unknown>[] = [{ role: "user", content: "Tell me a fact" }];
    const first = await chat(backend.gateway, TEST_KEY, { model, messages: history });
    history.push(kept(first.message), { role: "user", content: "another" });
    const second = await chat(backend.gateway, TEST_KEY, { model, messages: history });
    expect(second.status).toBe(200);
    history.push(kept(second.message), { role: "user", content: "one more" });
    const third = await chat(backend.gateway, TEST_KEY, { model, messages: history });
    expect(third.status).toBe(200);

    const { turns } = await show(first.session!);
    expect(turns).toHaveLength(3);
    const verdictKey = { field: "reasoning", provider: "strictp", model: "strict-model" };
    expect(turns[1]!.replay).toMatchObject({
      effective: ["reasoning_content"],
      attached: [{ message: 1, position: 1, fields: ["reasoning_content"] }],
      left_out: [{ ...verdictKey, by: "rejected" }],
      retried: true,
    });
    expect(turns[2]!.replay).toMatchObject({
      effective: ["reasoning_content"],
      matched: [
        { message: 1, position: 1, by: "fingerprint" },
        { message: 3, position: 2, by: "fingerprint" },
      ],
      left_out: [{ ...verdictKey, by: "verdict" }],
      retried: false,
    });
    const leftOut = (turns[2]!.replay!.left_out as { recorded_at: string | null }[])[0]!;
    expect(Date.parse(leftOut.recorded_at!)).toBeGreaterThan(Date.now() - 60_000);
  });

  test.skipIf(skip)("a field the request opted out of is left out by opt_out, with no verdict date", async () => {
    const model = "openrouter/qwen/qwen3-max";
    const history: Record<string, unknown>[] = [{ role: "user", content: "Count to three" }];
    const first = await chat(backend.gateway, TEST_KEY, { model, messages: history });
    history.push(kept(first.message), { role: "user", content: "again" });
    const second = await chat(backend.gateway, TEST_KEY, { model, messages: history, model_options: { replay: { omit: ["reasoning_details"] } } });
    expect(second.status).toBe(200);
    const { turns } = await show(first.session!);
    expect(turns[1]!.replay).toMatchObject({
      effective: ["reasoning_content", "reasoning"],
      attached: [{ message: 1, position: 1, fields: ["reasoning_content", "reasoning"] }],
      left_out: [{ field: "reasoning_details", by: "opt_out", provider: "openrouter", recorded_at: null }],
      retried: false,
    });
  });

  test.skipIf(skip)("signed and encrypted reasoning is listed by kind and size, never in clear", async () => {
    const answer = await chat(backend.gateway, TEST_KEY, {
      model: "openrouter/anthropic/claude-sonnet-4.5",
      messages: [{ role: "user", content: "Sign this" }],
    });
    expect(answer.status).toBe(200);
    await afterGatewayCommits(backend.gateway);
    // what the store holds verbatim, as the upstream sent it: a signed reasoning.text and a reasoning.encrypted blob
    const stored = (await storageOf(backend.gateway).sessions.show(answer.session!))!.turnList[0]!;
    const details = stored.reasoningDetails as { signature?: string; data?: string }[];
    const signature = details.find((entry) => entry.signature)!.signature!;
    const blob = details.find((entry) => entry.data)!.data!;
    const { body, turns } = await show(answer.session!);
    const text = JSON.stringify(body);
    expect(text).not.toContain(signature);
    expect(text).not.toContain(blob);
    // the carried answer is OpenRouter's own: its reasoning comes under `reasoning`
    expect(answer.message.reasoning_content).toBeUndefined();
    expect(turns[0]!.carriers).toEqual([
      { kind: "reasoning_text", bytes: Buffer.byteLength(String(answer.message.reasoning)) },
      { kind: "reasoning_details", items: 2, bytes: Buffer.byteLength(JSON.stringify(details)), types: ["reasoning.text", "reasoning.encrypted"] },
    ]);
    expect(turns[0]!.reasoning).toBe(answer.message.reasoning);
  });
});

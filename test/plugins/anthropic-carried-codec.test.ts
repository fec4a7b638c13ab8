import { expect, test } from "vitest";
import { createAnthropicCodec } from "../../plugins/anthropic/codec.js";
import { AS_SENT, type ChatMessage, type UpstreamCall } from "../../src/providers/contract.js";
import { upstreamCall } from "./support/calls.js";

/** A carried Messages request (docs/api.md#carried-requests): the anthropic codec's buildCarriedRequest, the client's bytes changed only where it must. */
const codec = createAnthropicCodec(() => {});
const SIGNED = { type: "thinking", thinking: "Rome, then.", signature: "anthropic-signature" };
const ENVELOPE = { type: "thinking", thinking: "", signature: "cd1.another-route" };
const TOOL_USE = { type: "tool_use", id: "toolu_1", name: "weather", input: { location: "Rome" } };

function carriedCall(baseUrl: string, canonical: ChatMessage[], settings?: NonNullable<UpstreamCall["carried"]>["settings"]) {
  const base = upstreamCall({ plugin: "anthropic", baseUrl, model: "claude-sonnet-4-5-20250929", body: { messages: canonical }, apiKey: "k" });
  return (bytes: Buffer, headers: Record<string, string> = {}) => codec.buildCarriedRequest!(base, { bytes, headers, ...(settings ? { settings } : {}) });
}

const client = (assistant: unknown[]) =>
  JSON.stringify({
    model: "claude-sonnet-4-5",
    max_tokens: 2048,
    unknown_field: { kept: [1, 2] },
    messages: [
      { role: "user", content: "Weather?" },
      { role: "assistant", content: assistant },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "18°C", is_error: false, cache_control: { type: "ephemeral" } }] },
    ],
  });
const assistantWith = (record: unknown[] | undefined): ChatMessage[] => [
  { role: "user", content: "Weather?" },
  {
    role: "assistant",
    content: null,
    tool_calls: [{ id: "toolu_1", type: "function", function: { name: "weather", arguments: "{}" } }],
    ...(record ? { native_record: { content: record } } : {}),
  },
  { role: "tool", tool_call_id: "toolu_1", content: "18°C" },
];

test("the client's own signed block: only the model changes", () => {
  const sent = client([SIGNED, TOOL_USE]);
  const wire = carriedCall("https://api.anthropic.com", assistantWith([SIGNED, { type: "tool_use", id: "toolu_1" }]))(Buffer.from(sent), {
    "anthropic-beta": "b1,b2",
    "anthropic-version": "2023-06-01",
  });
  expect(wire.url).toBe("https://api.anthropic.com/v1/messages");
  expect(wire.body.toString()).toBe(sent.replace('"model":"claude-sonnet-4-5"', '"model":"claude-sonnet-4-5-20250929"'));
  expect(wire.headers["anthropic-beta"]).toBe("b1,b2");
  expect(wire.headers["x-api-key"]).toBe("k");
});

test("carrierd's envelope is left out; the store's signed block goes where it was", () => {
  const wire = carriedCall(
    "https://api.anthropic.com",
    assistantWith([SIGNED, { type: "tool_use", id: "toolu_1" }]),
  )(Buffer.from(client([ENVELOPE, TOOL_USE])));
  expect(JSON.parse(wire.body.toString())).toEqual(
    JSON.parse(client([SIGNED, TOOL_USE]).replace('"model":"claude-sonnet-4-5"', '"model":"claude-sonnet-4-5-20250929"')),
  );
});

test("no record: every thinking block is left out, the rest byte for byte", () => {
  const wire = carriedCall("https://api.anthropic.com", assistantWith(undefined))(Buffer.from(client([ENVELOPE, TOOL_USE])));
  expect(wire.body.toString()).toBe(client([TOOL_USE]).replace('"model":"claude-sonnet-4-5"', '"model":"claude-sonnet-4-5-20250929"'));
});

test("Vertex AI: the model into the URL, anthropic_version into the body; the route's settings", () => {
  const sent = client([SIGNED, TOOL_USE]);
  const build = carriedCall(
    "https://us-east5-aiplatform.googleapis.com/v1/projects/p/locations/us-east5",
    assistantWith([SIGNED, { type: "tool_use", id: "toolu_1" }]),
    { defaults: { max_tokens: 99, top_k: 5 }, overrides: { unknown_field: { extra: true } } },
  );
  const wire = build(Buffer.from(sent), { "anthropic-version": "2023-06-01" });
  expect(wire.url).toBe(
    "https://us-east5-aiplatform.googleapis.com/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5-20250929:rawPredict",
  );
  expect(wire.headers["anthropic-version"]).toBeUndefined();
  const { model: _model, ...rest } = JSON.parse(sent) as Record<string, unknown>;
  expect(JSON.parse(wire.body.toString())).toEqual({ ...rest, unknown_field: { kept: [1, 2], extra: true }, anthropic_version: "vertex-2023-10-16", top_k: 5 });
});

test("a record of the client's own blocks as sent (AS_SENT) leaves its message unread; a later message still gets the store's block back", () => {
  const twoTurns = (second: unknown[]) =>
    JSON.stringify({
      model: "claude-sonnet-4-5",
      messages: [
        { role: "user", content: "Weather?" },
        { role: "assistant", content: [SIGNED, TOOL_USE] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "18°C" }] },
        // a role written with an escape is the assistant's, as JSON.parse (and the turn's view) reads it
        { role: "ESCAPED", content: second },
      ],
    }).replace('"ESCAPED"', '"\\u0061ssistant"');
  const stored = { type: "thinking", thinking: "And Paris.", signature: "anthropic-signature-2" };
  const canonical: ChatMessage[] = [
    { role: "user", content: "Weather?" },
    { role: "assistant", content: null, native_record: { content: [SIGNED, { type: "tool_use", id: "toolu_1" }], [AS_SENT]: true } },
    { role: "tool", tool_call_id: "toolu_1", content: "18°C" },
    { role: "assistant", content: "Sunny.", native_record: { content: [stored, { type: "text", text: "Sunny." }] } },
  ];
  const sent = twoTurns([{ type: "text", text: "Sunny." }]);
  expect(sent).toContain('"role":"\\u0061ssistant"');
  const wire = carriedCall("https://api.anthropic.com", canonical)(Buffer.from(sent));
  expect(wire.body.toString()).toBe(
    twoTurns([stored, { type: "text", text: "Sunny." }]).replace('"model":"claude-sonnet-4-5"', '"model":"claude-sonnet-4-5-20250929"'),
  );
  // every assistant message as sent: only the model changes
  const asSent = [
    canonical[0],
    canonical[1],
    canonical[2],
    { ...canonical[3], native_record: { content: [{ type: "text", text: "Sunny." }], [AS_SENT]: true } },
  ];
  expect(carriedCall("https://api.anthropic.com", asSent)(Buffer.from(sent)).body.toString()).toBe(
    sent.replace('"model":"claude-sonnet-4-5"', '"model":"claude-sonnet-4-5-20250929"'),
  );
});

import { expect, test } from "vitest";
import { createGeminiCodec } from "../../plugins/gemini/codec.js";
import { SKIP_SIGNATURE } from "../../plugins/gemini/parts-layout.js";
import type { ChatMessage, UpstreamCall } from "../../src/providers/contract.js";
import { upstreamCall } from "./support/calls.js";

/** A carried Gemini request (docs/api.md#gemini-request-carried-on-a-gemini-route): the gemini codec's buildCarriedRequest, the client's bytes changed only where it must. */
const codec = createGeminiCodec(() => {});
const THOUGHT = { type: "thought", text: "Rome first.", thoughtSignature: "sig-thought" };
const CALL = { type: "function_call", id: "c1", native_id: true, thoughtSignature: "sig-call", args: { location: "Rome" } };
const TEXT = { type: "text", text: "Looking it up.", thoughtSignature: "sig-text" };

function carried(record: unknown[] | undefined, model = "gemini-3-pro-preview", settings?: NonNullable<UpstreamCall["carried"]>["settings"]) {
  const canonical: ChatMessage[] = [
    { role: "user", content: "Weather?" },
    {
      role: "assistant",
      content: "Looking it up.",
      tool_calls: [{ id: "c1", type: "function", function: { name: "weather", arguments: '{"location":"Rome"}' } }],
      ...(record ? { native_record: { parts: record } } : {}),
    },
    { role: "tool", tool_call_id: "c1", content: "18°C" },
  ];
  const call = upstreamCall({
    plugin: "gemini",
    baseUrl: "https://generativelanguage.googleapis.com",
    model,
    body: { messages: canonical },
    apiKey: "k",
    stream: true,
  });
  return (bytes: string, headers: Record<string, string> = {}) =>
    codec.buildCarriedRequest!(call, { bytes: Buffer.from(bytes), headers, ...(settings ? { settings } : {}) });
}

const client = (modelParts: unknown[]) =>
  JSON.stringify({
    contents: [
      { role: "user", parts: [{ text: "Weather?" }] },
      { role: "model", parts: modelParts },
      { role: "user", parts: [{ functionResponse: { id: "c1", name: "weather", response: { output: "18°C" } } }] },
    ],
    tools: [{ googleSearch: {} }, { functionDeclarations: [{ name: "weather" }] }],
    generationConfig: { topK: 3, thinkingConfig: { includeThoughts: true } },
  });
const callPart = (signature?: string) => ({
  functionCall: { name: "weather", args: { location: "Rome" }, id: "c1" },
  ...(signature ? { thoughtSignature: signature } : {}),
});

test("the client's own signatures: the bytes as sent, the route's model in the URL, the route's key, the client's x-goog-api-client", () => {
  const sent = client([{ text: "Looking it up.", thoughtSignature: "sig-text" }, callPart("sig-call")]);
  const wire = carried([THOUGHT, TEXT, CALL])(sent, { "x-goog-api-client": "genai-js/1", "x-goog-api-key": "the-clients-carrierd-key" });
  expect(wire.url).toBe("https://generativelanguage.googleapis.com/v1beta/models/gemini-3-pro-preview:streamGenerateContent?alt=sse");
  expect(wire.body.toString()).toBe(sent);
  expect(wire.headers["x-goog-api-key"]).toBe("k");
  expect(wire.headers["x-goog-api-client"]).toBe("genai-js/1");
});

test("dropped signatures go back on their parts: the call by its id, text by its text, the signed thought at the front", () => {
  const sent = client([{ text: "Looking it up." }, callPart()]);
  const body = carried([THOUGHT, TEXT, CALL])(sent).body.toString();
  const expected = client([
    { text: "Rome first.", thought: true, thoughtSignature: "sig-thought" },
    { text: "Looking it up.", thoughtSignature: "sig-text" },
    callPart("sig-call"),
  ]);
  expect(body).toBe(expected);
});

test("carrierd's envelope is never sent: the stored signature in its place, or the skip value on a model that checks signatures", () => {
  const sent = client([{ text: "Looking it up." }, callPart("cd1.sealed-elsewhere")]);
  expect(carried([CALL])(sent).body.toString()).toBe(client([{ text: "Looking it up." }, callPart("sig-call")]));
  expect(carried(undefined)(sent).body.toString()).toBe(client([{ text: "Looking it up." }, callPart(SKIP_SIGNATURE)]));
  // Gemini 2.5 signs no calls it checks: the envelope simply comes off
  expect(carried(undefined, "gemini-2.5-flash")(sent).body.toString()).toBe(client([{ text: "Looking it up." }, callPart()]));
});

test("a call whose arguments the client reshaped gets no stored signature (Gemini would refuse it)", () => {
  const reshaped = { functionCall: { name: "weather", args: { location: "Roma" }, id: "c1" } };
  const sent = client([reshaped]);
  expect(carried([CALL])(sent).body.toString()).toBe(sent);
});

test("the route's settings are Gemini keys at the top; a model in the body is removed (it is in the URL)", () => {
  const sent = JSON.stringify({ model: "models/x", contents: [{ role: "user", parts: [{ text: "hi" }] }] });
  const body = carried(undefined, "gemini-3-pro-preview", { defaults: { safetySettings: [] }, overrides: undefined })(sent).body.toString();
  expect(JSON.parse(body)).toEqual({ contents: [{ role: "user", parts: [{ text: "hi" }] }], safetySettings: [] });
});

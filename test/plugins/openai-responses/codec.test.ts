import { describe, expect, test } from "vitest";
import { responsesCodec } from "../../../plugins/openai-responses/codec.js";
import { mergeOutput } from "../../../plugins/openai-responses/output-record.js";
import { type ChatMessage, type JsonObject, partsOf } from "../../../src/providers/contract.js";
import { fold, upstreamCall } from "../support/calls.js";

const USER: ChatMessage = { role: "user", content: "hi" };

function request(baseUrl: string, options: Partial<Parameters<typeof upstreamCall>[0]> = {}) {
  const call = upstreamCall({ plugin: "openai-responses", baseUrl, model: "gpt-5", body: { messages: [USER] }, apiKey: "secret", ...options });
  const built = responsesCodec(call).buildRequest(call);
  return { ...built, json: JSON.parse(String(built.body)) as JsonObject };
}

describe("front doors by base_url", () => {
  test("OpenAI and xAI: {base}/responses with a Bearer key", () => {
    for (const base of ["https://api.openai.com/v1", "https://api.x.ai/v1/"]) {
      const { url, headers } = request(base);
      expect(url).toBe(`${base.replace(/\/$/, "")}/responses`);
      expect(headers.authorization).toBe("Bearer secret");
      expect(headers["api-key"]).toBeUndefined();
    }
  });

  test("Azure OpenAI v1: {base}/responses with the api-key header", () => {
    const { url, headers } = request("https://contoso.openai.azure.com/openai/v1");
    expect(url).toBe("https://contoso.openai.azure.com/openai/v1/responses");
    expect(headers["api-key"]).toBe("secret");
    expect(headers.authorization).toBeUndefined();
  });

  test("a provider's auth overrides the host: api-key on any host, bearer on Azure's", () => {
    const sent = (baseUrl: string, auth: "bearer" | "api-key") => {
      const call = upstreamCall({ plugin: "openai-responses", baseUrl, model: "gpt-5", body: { messages: [USER] }, apiKey: "secret" });
      const withAuth = { ...call, provider: { ...call.provider, auth } };
      return responsesCodec(withAuth).buildRequest(withAuth).headers;
    };
    expect(sent("https://gateway.corp.example/openai/v1", "api-key")).toMatchObject({ "api-key": "secret" });
    expect(sent("https://gateway.corp.example/openai/v1", "api-key").authorization).toBeUndefined();
    expect(sent("https://contoso.openai.azure.com/openai/v1", "bearer")).toMatchObject({ authorization: "Bearer secret" });
    expect(sent("https://contoso.openai.azure.com/openai/v1", "bearer")["api-key"]).toBeUndefined();
  });

  test("Azure OpenAI's dated API: the path goes before the api-version query", () => {
    const { url, headers } = request("https://contoso.cognitiveservices.azure.com/openai?api-version=2025-04-01-preview");
    expect(url).toBe("https://contoso.cognitiveservices.azure.com/openai/responses?api-version=2025-04-01-preview");
    expect(headers["api-key"]).toBe("secret");
  });
});

test("a chat body in the Responses API's names: tools flat, tool_choice, text.format, max_output_tokens, developer role", () => {
  const { json } = request("https://api.openai.com/v1", {
    body: {
      messages: [{ role: "developer", content: "Be brief." }, USER],
      tools: [{ type: "function", function: { name: "weather", parameters: { type: "object", properties: {} } } }],
      tool_choice: { type: "function", function: { name: "weather" } },
      response_format: { type: "json_schema", json_schema: { name: "w", schema: { type: "object" }, strict: true } },
      max_completion_tokens: 500,
      reasoning_effort: "high",
      stream_options: { include_usage: true },
      native_record: { leaked: true },
    },
    effort: "high",
  });
  expect(json).toEqual({
    model: "gpt-5",
    input: [
      { type: "message", role: "developer", content: "Be brief." },
      { type: "message", role: "user", content: "hi" },
    ],
    store: false,
    include: ["reasoning.encrypted_content"],
    max_output_tokens: 500,
    tools: [{ type: "function", name: "weather", parameters: { type: "object", properties: {} }, strict: false }],
    tool_choice: { type: "function", name: "weather" },
    text: { format: { type: "json_schema", name: "w", schema: { type: "object" }, strict: true } },
    reasoning: { effort: "high", summary: "auto" },
  });
});

test("a turn's record: reasoning items verbatim, bound to the model; replayed before their call to that model only", () => {
  const call = upstreamCall({ plugin: "openai-responses", baseUrl: "https://api.openai.com/v1", model: "gpt-5", body: { messages: [USER] } });
  const reasoning = { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "Think." }], encrypted_content: "gAAAAAblob" };
  const turn = fold(
    responsesCodec(call).decodeResponse({
      id: "resp_1",
      model: "gpt-5-2025-08-07",
      status: "completed",
      output: [reasoning, { type: "function_call", id: "fc_1", call_id: "call_1", name: "weather", arguments: '{"location":"Paris"}' }],
      usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15, output_tokens_details: { reasoning_tokens: 3 } },
    }),
    mergeOutput,
  );
  expect(turn.reasoningText).toBe("Think.");
  expect(turn.nativeRecord).toEqual({ model: "gpt-5", output: [reasoning, { type: "function_call", call_id: "call_1", id: "fc_1" }] });
  const assistant: ChatMessage = {
    role: "assistant",
    content: null,
    tool_calls: [{ id: "call_1", type: "function", function: { name: "weather", arguments: '{"location":"Paris"}' } }],
    native_record: turn.nativeRecord,
  };
  const messages = [USER, assistant, { role: "tool", tool_call_id: "call_1", content: "20 C" } as ChatMessage];
  const replayed = request("https://api.openai.com/v1", { body: { messages } }).json.input as JsonObject[];
  expect(replayed.slice(1)).toEqual([
    reasoning,
    { type: "function_call", call_id: "call_1", name: "weather", arguments: '{"location":"Paris"}', id: "fc_1" },
    { type: "function_call_output", call_id: "call_1", output: "20 C" },
  ]);
  const other = request("https://api.openai.com/v1", { model: "o4-mini", body: { messages } }).json.input as JsonObject[];
  expect(other.slice(1)).toEqual([
    { type: "function_call", call_id: "call_1", name: "weather", arguments: '{"location":"Paris"}' },
    { type: "function_call_output", call_id: "call_1", output: "20 C" },
  ]);
});

test("stream endings: incomplete is a length finish, response.failed and error events fail the turn", () => {
  const call = upstreamCall({ plugin: "openai-responses", baseUrl: "https://api.openai.com/v1", model: "gpt-5", body: { messages: [USER] }, stream: true });
  const decode = responsesCodec(call).createStreamDecoder();
  const incomplete = decode({
    data: JSON.stringify({ type: "response.incomplete", response: { status: "incomplete", incomplete_details: { reason: "max_output_tokens" } } }),
  });
  expect(incomplete).toEqual([{ type: "finish", reason: "length" }]);
  expect(() =>
    decode({ data: JSON.stringify({ type: "response.failed", response: { status: "failed", error: { code: "server_error", message: "boom" } } }) }),
  ).toThrow("server_error: boom");
  expect(() => decode({ data: JSON.stringify({ type: "error", code: "rate_limit_exceeded", message: "slow down" }) })).toThrow(
    "rate_limit_exceeded: slow down",
  );
  expect(() => decode({ data: "not json" })).toThrow("cannot be read");
});

test("delta events: plain text is sliced out, escaped text parsed, both the same text", () => {
  const call = upstreamCall({ plugin: "openai-responses", baseUrl: "https://api.openai.com/v1", model: "gpt-5", body: { messages: [USER] }, stream: true });
  const decode = responsesCodec(call).createStreamDecoder();
  const event = (type: string, delta: string) =>
    partsOf(
      decode({
        data: JSON.stringify({ type, sequence_number: 4, item_id: "msg_1", output_index: 1, content_index: 0, delta, logprobs: [], obfuscation: 'x"y' }),
      }),
    );
  expect(event("response.output_text.delta", "Hello")).toEqual([{ type: "text-delta", text: "Hello" }]);
  expect(event("response.output_text.delta", 'say "hi"\n')).toEqual([{ type: "text-delta", text: 'say "hi"\n' }]);
  expect(event("response.reasoning_summary_text.delta", "Think ✓")).toEqual([{ type: "reasoning-delta", text: "Think ✓" }]);
  expect(event("response.reasoning_summary_text.delta", "a\\b")).toEqual([{ type: "reasoning-delta", text: "a\\b" }]);
  expect(event("response.output_text.delta", "")).toEqual([]);
});

test("xAI's reasoning items come without an id: stored and replayed all the same", () => {
  const call = upstreamCall({ plugin: "openai-responses", baseUrl: "https://api.x.ai/v1", model: "grok-4", body: { messages: [USER] } });
  const reasoning = { type: "reasoning", summary: [], encrypted_content: "Hfq+g7jQ4QfQnY" };
  const turn = fold(
    responsesCodec(call).decodeResponse({
      id: "resp_1",
      model: "grok-4",
      status: "completed",
      output: [reasoning, { type: "function_call", call_id: "call-5faadddf-0", name: "get_temperature", arguments: '{"location":"Paris"}' }],
    }),
    mergeOutput,
  );
  expect(turn.nativeRecord).toEqual({ model: "grok-4", output: [reasoning, { type: "function_call", call_id: "call-5faadddf-0" }] });
  const assistant: ChatMessage = {
    role: "assistant",
    content: null,
    tool_calls: [{ id: "call-5faadddf-0", type: "function", function: { name: "get_temperature", arguments: '{"location":"Paris"}' } }],
    native_record: turn.nativeRecord,
  };
  const input = request("https://api.x.ai/v1", { model: "grok-4", body: { messages: [USER, assistant] } }).json.input as JsonObject[];
  expect(input.slice(1)).toEqual([
    reasoning,
    { type: "function_call", call_id: "call-5faadddf-0", name: "get_temperature", arguments: '{"location":"Paris"}' },
  ]);
});

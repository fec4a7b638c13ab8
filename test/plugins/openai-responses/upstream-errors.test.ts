import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { captureLog, type CapturedLog } from "../../support/captured-log.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { RATE_LIMIT_ERROR, startOpenAIResponsesUpstream, type ResponsesUpstream } from "../../support/openai-responses-upstream.js";
import { ask, type Message } from "../../support/stateless-client.js";
import { waitFor } from "../../support/wait-for.js";
import { asUpstreamFailure } from "../../../src/ingress/start-turn.js";
import { toOpenAIError } from "../../../src/foundation/errors/gateway-error.js";
import { ResponsesStreamError } from "../../../plugins/openai-responses/response-decoder.js";

/**
 * OpenAI's own errors reach OpenAI-wire clients as OpenAI sent them
 * (docs/api.md#upstream-errors): the status, and `message`, `type`, `param`,
 * `code` unchanged, so an SDK sees `invalid_encrypted_content` or
 * `rate_limit_exceeded`; a Messages client gets them in Anthropic's shape.
 */
const KEY = "sk-openai-test";
const TOOL = { type: "function", function: { name: "weather", parameters: { type: "object", properties: { location: { type: "string" } } } } };
const RESPONSES_TOOL = { type: "function", name: "weather", parameters: { type: "object", properties: { location: { type: "string" } } } };
const UNVERIFIED = /^The encrypted content gAAA\.\.\..{4} could not be verified\. Reason: Encrypted content could not be decrypted or parsed\.$/;

let upstream: ResponsesUpstream;
let gateway: TestGateway;
let log: CapturedLog;
beforeAll(async () => {
  upstream = await startOpenAIResponsesUpstream({ apiKey: KEY });
  log = captureLog();
  gateway = await startTestGateway({
    routes: `version: 1
providers:
  openai: { plugin: openai-responses, base_url: ${upstream.url}/v1, api_key_env: OPENAI_API_KEY }
models:
  - { name: gpt-5, provider: openai, model: gpt-5 }
  - { name: gpt-5-busy, provider: openai, model: gpt-5-busy }
carriers:
  - match: { plugin: openai-responses }
    fields: []
`,
    env: { OPENAI_API_KEY: KEY },
    log: log.logger,
  });
});
afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
});

/** The access-log line of the refused request of `sessionId`, once written. */
async function accessLine(sessionId: string): Promise<Record<string, unknown>> {
  const refused = (entry: CapturedLog["lines"][number]) => entry.message === "request" && entry.object.session_id === sessionId && entry.object.status !== 200;
  const line = await waitFor(() => log.lines.find(refused), {
    what: `the access-log line for ${sessionId}`,
  });
  return line.object;
}

describe.each([false, true])("stream=%s", (stream) => {
  test("chat completions: a blob the upstream no longer verifies is OpenAI's 400 invalid_encrypted_content", async () => {
    const session = { "x-session-id": `blob-chat-${stream}` };
    const messages: Message[] = [{ role: "user", content: "Weather in Paris?" }];
    const first = await ask(gateway, { model: "gpt-5", stream, tools: [TOOL], messages }, session);
    const call = (first.kept.tool_calls as { id: string }[])[0]!;
    messages.push(first.kept, { role: "tool", tool_call_id: call.id, content: "20 C" });
    upstream.switchOrganisation();
    const response = await gateway.post("/v1/chat/completions", { model: "gpt-5", stream, tools: [TOOL], messages }, session);
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as { error: Record<string, unknown> };
    expect(error).toEqual({ message: expect.stringMatching(UNVERIFIED), type: "invalid_request_error", param: null, code: "invalid_encrypted_content" });
    expect(upstream.received.at(-1)!.status).toBe(400);
    expect(await accessLine(session["x-session-id"])).toMatchObject({ status: 400, error_code: "invalid_encrypted_content" });
  });

  test("Responses API: the same refusal, unchanged", async () => {
    // carried: the client asks for the upstream's blob itself, as Codex does, and sends it back
    const base = { model: "gpt-5", store: false, include: ["reasoning.encrypted_content"], tools: [RESPONSES_TOOL] };
    const first = await gateway.post("/v1/responses", { ...base, input: "Weather in Paris?" });
    const output = ((await first.json()) as { output: Record<string, unknown>[] }).output;
    const call = output.find((item) => item.type === "function_call")!;
    upstream.switchOrganisation();
    const input = [{ role: "user", content: "Weather in Paris?" }, ...output, { type: "function_call_output", call_id: call.call_id, output: "20 C" }];
    const response = await gateway.post("/v1/responses", { ...base, stream, input });
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as { error: Record<string, unknown> };
    expect(error).toEqual({ message: expect.stringMatching(UNVERIFIED), type: "invalid_request_error", param: null, code: "invalid_encrypted_content" });
  });

  test("OpenAI's 429 rate_limit_exceeded: its status, error object and Retry-After on both OpenAI APIs", async () => {
    const chat = await gateway.post(
      "/v1/chat/completions",
      { model: "gpt-5-busy", stream, messages: [{ role: "user", content: "hi" }] },
      {
        "x-session-id": `busy-${stream}`,
      },
    );
    const responses = await gateway.post("/v1/responses", { model: "gpt-5-busy", stream, input: "hi" });
    for (const response of [chat, responses]) {
      expect(response.status).toBe(429);
      expect(response.headers.get("retry-after")).toBe("2");
      expect(await response.json()).toEqual(RATE_LIMIT_ERROR);
    }
    expect(await accessLine(`busy-${stream}`)).toMatchObject({ status: 429, error_code: "rate_limit_exceeded", error_message: RATE_LIMIT_ERROR.error.message });
  });

  test("Messages API: OpenAI's refusal in Anthropic's shape", async () => {
    const client = new Anthropic({ apiKey: gateway.key, baseURL: gateway.url, maxRetries: 0 });
    const params = { model: "gpt-5-busy", max_tokens: 100, messages: [{ role: "user" as const, content: "hi" }] };
    const failure = await (stream ? client.messages.create({ ...params, stream: true }) : client.messages.create(params)).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Anthropic.RateLimitError);
    expect((failure as InstanceType<typeof Anthropic.RateLimitError>).error).toEqual({
      type: "error",
      error: { type: "rate_limit_error", message: RATE_LIMIT_ERROR.error.message },
    });
  });
});

test("an error OpenAI reports inside its stream keeps its code in the client's error event", async () => {
  const failed = asUpstreamFailure(ResponsesStreamError.from({ code: "server_error", message: "The model failed to generate a response." }, "failed"));
  expect(toOpenAIError(failed)).toEqual({
    error: { message: "The model failed to generate a response.", type: "upstream_error", param: null, code: "server_error" },
  });
  // without a code it stays carrierd's own
  const bare = asUpstreamFailure(ResponsesStreamError.from({ message: "broken" }, "failed"));
  expect(toOpenAIError(bare).error).toMatchObject({ type: "upstream_error", code: "upstream_error" });
});

import {
  IncompleteStreamError,
  type JsonObject,
  parseObject,
  type PluginContext,
  type StreamPart,
  type UpstreamCall,
  type UpstreamResult,
  shown,
} from "../../src/providers/plugin-api.js";
import { buildMessagesBody } from "../anthropic/request-body.js";
import { AnthropicDecoder } from "../anthropic/response-decoder.js";
import { buildConverseBody } from "./converse-request.js";
import { ConverseDecoder } from "./converse-decoder.js";
import { readEventStream } from "./event-stream.js";
import { operationUrl, post } from "./transport.js";

/**
 * Which Bedrock runtime API a model is called through: `converse` (default:
 * every model, `reasoningContent` blocks) or `invoke` (InvokeModel with
 * Anthropic's own Messages body, for Claude). Chosen per model with
 * `params: { bedrock_api: invoke }` in routes.yaml; never sent upstream.
 */
const API_PARAM = "bedrock_api";

/**
 * One Bedrock call. ConverseStream and InvokeModelWithResponseStream answer
 * in AWS's binary event-stream framing, not SSE, so this plugin does its own
 * transport (undici, SigV4) instead of the core's SSE path.
 */
export async function invokeBedrock(call: UpstreamCall, context: PluginContext): Promise<UpstreamResult> {
  const { [API_PARAM]: api, ...rest } = call.body;
  const stripped: UpstreamCall = { ...call, body: rest };
  const invoke = api === "invoke";
  let body: JsonObject;
  if (invoke) {
    body = buildMessagesBody(stripped, (message) => context.log.debug({}, message));
    delete body.model;
    delete body.stream;
    body.anthropic_version = "bedrock-2023-05-31";
  } else {
    body = buildConverseBody(stripped);
  }
  const operation = invoke ? (call.stream ? "invoke-with-response-stream" : "invoke") : call.stream ? "converse-stream" : "converse";
  const url = operationUrl(call, operation);
  const accept = call.stream ? "application/vnd.amazon.eventstream" : "application/json";
  let response = await post(context.http, call, url, JSON.stringify(body), accept);
  if (response.status >= 400) {
    const text = await response.body.text();
    if (invoke || !refusesRedacted(response.status, text) || !JSON.stringify(body).includes('"redactedContent"'))
      return { ok: false, status: response.status, body: text };
    // some models and regions refuse redacted reasoning: resend once without it, as hermes-agent does
    context.log.warn({ model: call.model, status: response.status }, "Bedrock refused redacted reasoning; resending once without it");
    response = await post(context.http, call, url, JSON.stringify(buildConverseBody(stripped, { dropRedacted: true })), accept);
    if (response.status >= 400) return { ok: false, status: response.status, body: await response.body.text() };
  }
  if (!call.stream) return { ok: true, parts: decodeWhole(await response.body.text(), invoke) };
  return { ok: true, parts: invoke ? invokeStream(response.body) : converseStream(response.body) };
}

/** A ValidationException about redacted or encrypted reasoning (hermes-agent matches `ValidationException.*(?:redacted|encrypt)`). */
function refusesRedacted(status: number, body: string): boolean {
  return status === 400 && /redacted|encrypt/i.test(body);
}

/**
 * A whole answer, parsed when read: a body that is not a JSON object fails
 * the turn as an upstream error, as the core's own transport treats one.
 */
async function* decodeWhole(text: string, invoke: boolean): AsyncIterable<StreamPart> {
  const body = parseObject(text);
  if (!body) throw new Error(`Bedrock answered with a body that is not a JSON object: ${JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text)}`);
  yield* invoke ? new AnthropicDecoder().response(body) : new ConverseDecoder().response(body);
}

async function* converseStream(body: AsyncIterable<Uint8Array>): AsyncIterable<StreamPart> {
  const decoder = new ConverseDecoder();
  let finished = false;
  for await (const message of readEventStream(body)) {
    failOnException(message);
    for (const part of decoder.event(message.type, message.payload)) {
      if (part.type === "finish") finished = true;
      yield part;
    }
  }
  if (!finished) throw new IncompleteStreamError("Bedrock ended its stream without messageStop");
}

/** InvokeModel streams Anthropic's own events, each base64 in a `chunk` event's `bytes`. */
async function* invokeStream(body: AsyncIterable<Uint8Array>): AsyncIterable<StreamPart> {
  const decoder = new AnthropicDecoder();
  let finished = false;
  for await (const message of readEventStream(body)) {
    failOnException(message);
    if (message.type !== "chunk" || typeof message.payload.bytes !== "string") continue;
    for (const part of decoder.event(Buffer.from(message.payload.bytes, "base64").toString("utf8"))) {
      if (part.type === "finish") finished = true;
      yield part;
    }
  }
  if (!finished) throw new IncompleteStreamError("Bedrock ended its stream without a stop reason");
}

/** An exception frame mid-stream (throttling, validation, model error) fails the turn; it is never a short answer. */
function failOnException(message: { messageType: string; type: string; payload: JsonObject }): void {
  if (message.messageType === "exception") throw new Error(`Bedrock ${message.type}: ${shown(message.payload.message ?? message.payload.Message ?? "")}`);
}

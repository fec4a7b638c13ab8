import {
  detached,
  type JsonObject,
  parseObject,
  readArray,
  readNumber,
  readObject,
  readString,
  requireObject,
  type StreamPart,
  UnreadableChunkError,
  UpstreamReportedError,
  type Usage,
} from "../../src/providers/plugin-api.js";
import { reasoningEntry } from "./output-record.js";

/** An event that decodes to no part (shared: the consumer only reads it). */
const NOTHING: readonly StreamPart[] = [];

/**
 * The Responses API's answer → canonical parts, streamed
 * (https://platform.openai.com/docs/api-reference/responses-streaming) or
 * whole. Summary text (and the raw reasoning text some hosts stream) is
 * reasoning; each closed output item becomes one `native-record` fragment,
 * a reasoning item verbatim with its `encrypted_content`. `model` is the
 * upstream model the request named: the record is bound to it.
 */
export class ResponsesDecoder {
  /** Tool-call index of each function_call item, by output_index. */
  private readonly calls = new Map<number, { index: number; sentArguments: boolean }>();
  private toolCount = 0;
  private sawCall = false;

  constructor(private readonly model: string) {}

  /** One SSE event's data; unknown events are ignored. */
  event(data: string): StreamPart | readonly StreamPart[] {
    // most of a stream: text and summary deltas, read without a parse when their text needs no unescaping
    if (data.slice(0, TEXT_DELTA.length) === TEXT_DELTA) {
      const text = plainDelta(data);
      if (text !== undefined) return text ? { type: "text-delta", text } : NOTHING;
    } else if (data.slice(0, SUMMARY_DELTA.length) === SUMMARY_DELTA) {
      const text = plainDelta(data);
      if (text !== undefined) return text ? { type: "reasoning-delta", text } : NOTHING;
    }
    const payload = parseObject(data);
    if (!payload) {
      if (data.trim() === "") return NOTHING;
      throw new UnreadableChunkError(data);
    }
    switch (payload.type) {
      case "response.output_text.delta":
        return textPart("text-delta", payload.delta);
      case "response.reasoning_summary_text.delta":
      case "response.reasoning_text.delta":
        return textPart("reasoning-delta", payload.delta);
      case "response.reasoning_summary_part.added":
        // summary parts are paragraphs of one reasoning text
        return (readNumber(payload.summary_index) ?? 0) > 0 ? { type: "reasoning-delta", text: "\n\n" } : NOTHING;
      case "response.function_call_arguments.delta": {
        const call = this.calls.get(readNumber(payload.output_index) ?? -1);
        const fragment = readString(payload.delta) ?? "";
        if (!call || !fragment) return NOTHING;
        call.sentArguments = true;
        return { type: "tool-call-delta", index: call.index, arguments: fragment };
      }
      case "response.output_item.added":
        return this.opened(readNumber(payload.output_index) ?? -1, readObject(payload.item) ?? {});
      case "response.output_item.done":
        return this.closed(readNumber(payload.output_index) ?? -1, readObject(payload.item) ?? {});
      case "response.created": {
        const response = readObject(payload.response);
        return { type: "response-metadata", id: readString(response?.id), model: readString(response?.model) };
      }
      case "response.completed":
      case "response.incomplete":
        return this.finished(readObject(payload.response) ?? {});
      case "response.failed": {
        throw ResponsesStreamError.from(readObject(readObject(payload.response)?.error) ?? {}, "failed");
      }
      case "error":
        throw ResponsesStreamError.from(
          { message: payload.message ?? JSON.stringify(payload), code: payload.code ?? null, param: payload.param ?? null },
          "error",
        );
      default:
        return NOTHING; // in_progress, content_part, *.done text events, and whatever the API adds next
    }
  }

  /** A whole non-streaming response object. */
  response(body: JsonObject): StreamPart[] {
    const error = readObject(body.error);
    if (body.status === "failed" && error) throw ResponsesStreamError.from(error, "failed");
    const parts: StreamPart[] = [{ type: "response-metadata", id: readString(body.id), model: readString(body.model) }];
    readArray(body.output)?.forEach((entry, position) => {
      const item = requireObject(entry, "an output item");
      if (item.type === "reasoning") {
        const summary = readArray(item.summary) ?? [];
        const texts = summary.map((part) => readString(readObject(part)?.text) ?? "").filter(Boolean);
        if (texts.length > 0) parts.push({ type: "reasoning-delta", text: texts.join("\n\n") });
      } else if (item.type === "message") {
        const text = (readArray(item.content) ?? [])
          .map((part) => (readObject(part)?.type === "output_text" ? (readString(readObject(part)?.text) ?? "") : ""))
          .join("");
        if (text) parts.push({ type: "text-delta", text });
      }
      parts.push(...this.opened(position, item, true));
      parts.push(...this.closed(position, item));
    });
    parts.push(...this.finished(body));
    return parts;
  }

  private opened(position: number, item: JsonObject, whole = false): StreamPart[] {
    if (item.type !== "function_call") return [];
    const index = this.toolCount++;
    this.sawCall = true;
    const args = readString(item.arguments) ?? "";
    this.calls.set(position, { index, sentArguments: whole && args !== "" });
    const parts: StreamPart[] = [{ type: "tool-call-delta", index, id: readString(item.call_id), name: readString(item.name), arguments: "" }];
    if (whole && args) parts.push({ type: "tool-call-delta", index, arguments: args });
    return parts;
  }

  private closed(position: number, item: JsonObject): StreamPart[] {
    const parts: StreamPart[] = [];
    switch (item.type) {
      case "reasoning": {
        const entry = reasoningEntry(item);
        if (entry) parts.push({ type: "native-record", record: { model: this.model, output: [entry] } });
        break;
      }
      case "message":
        parts.push({ type: "native-record", record: { model: this.model, output: [{ type: "message" }] } });
        break;
      case "function_call": {
        const call = this.calls.get(position);
        const callId = readString(item.call_id);
        // arguments that arrived only whole, on the closed item, still reach the client
        if (call && !call.sentArguments) parts.push({ type: "tool-call-delta", index: call.index, arguments: readString(item.arguments) || "{}" });
        if (callId !== undefined) {
          const entry: JsonObject = { type: "function_call", call_id: callId };
          if (typeof item.id === "string") entry.id = item.id;
          parts.push({ type: "native-record", record: { model: this.model, output: [entry] } });
        }
        break;
      }
    }
    return parts;
  }

  private finished(response: JsonObject): StreamPart[] {
    const parts: StreamPart[] = [];
    // the tier that served the answer, known once it is finished (`response.created` may still say `auto`)
    const tier = readString(response.service_tier);
    if (tier !== undefined) parts.push({ type: "response-metadata", serviceTier: tier });
    const usage = readObject(response.usage);
    if (usage) parts.push({ type: "usage", usage: toUsage(usage) });
    parts.push({ type: "finish", reason: finishReason(response, this.sawCall) });
    return parts;
  }
}

/** How OpenAI's delta events begin: `type` is their first member. */
const TEXT_DELTA = '{"type":"response.output_text.delta",';
const SUMMARY_DELTA = '{"type":"response.reasoning_summary_text.delta",';
const DELTA_KEY = '"delta":"';
/** What a JSON string may not hold unescaped, and the escape itself: a string without these is its own value. */
const NOT_PLAIN = /[\\\u0000-\u001f]/;

/**
 * The `delta` string of a delta event, sliced out, when it holds no escape
 * (else undefined: the event is parsed). A quote can only stand unescaped
 * at a string's ends, so `"delta":"` is the key itself, and the next quote
 * ends its value when no backslash comes before it.
 */
function plainDelta(data: string): string | undefined {
  const at = data.indexOf(DELTA_KEY);
  if (at < 0) return undefined;
  const start = at + DELTA_KEY.length;
  const end = data.indexOf('"', start);
  if (end < 0) return undefined;
  const text = data.slice(start, end);
  // a text kept for the whole turn must not keep the network read it came in
  return NOT_PLAIN.test(text) ? undefined : detached(text);
}

function textPart(type: "text-delta" | "reasoning-delta", delta: unknown): StreamPart | readonly StreamPart[] {
  const text = readString(delta);
  return text ? { type, text } : NOTHING;
}

/** A failure the upstream reported inside its 200 stream (`response.failed`, `error`); the core relays it as an upstream error, its code kept. */
export class ResponsesStreamError extends UpstreamReportedError {
  constructor(
    readonly code: string,
    detail: string,
    error: JsonObject = {},
  ) {
    super(error, `the upstream reported an error: ${code}: ${detail}`);
    this.name = "ResponsesStreamError";
  }

  /** From the upstream's error object; `otherwise` names the failure when it has no code. */
  static from(error: JsonObject, otherwise: string): ResponsesStreamError {
    return new ResponsesStreamError(readString(error.code) ?? otherwise, readString(error.message) ?? "the response failed", error);
  }
}

/** `incomplete_details.reason` → chat finish reasons; a completed response with calls finished for them. */
function finishReason(response: JsonObject, sawCall: boolean): string {
  if (response.status === "incomplete") {
    const reason = readString(readObject(response.incomplete_details)?.reason);
    return reason === "content_filter" ? "content_filter" : "length";
  }
  return sawCall ? "tool_calls" : "stop";
}

/** Responses usage (input/output tokens) in chat's shape; cached and reasoning counts kept. */
function toUsage(usage: JsonObject): Usage {
  const prompt = readNumber(usage.input_tokens) ?? 0;
  const completion = readNumber(usage.output_tokens) ?? 0;
  const out: Usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: readNumber(usage.total_tokens) ?? prompt + completion };
  const reasoning = readNumber(readObject(usage.output_tokens_details)?.reasoning_tokens);
  if (reasoning !== undefined) out.completion_tokens_details = { reasoning_tokens: reasoning };
  const cached = readNumber(readObject(usage.input_tokens_details)?.cached_tokens);
  if (cached !== undefined) out.prompt_tokens_details = { cached_tokens: cached };
  return out;
}

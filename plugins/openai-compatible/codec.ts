import {
  chatBodyBytes,
  type HttpCodec,
  type JsonObject,
  readArray,
  readObject,
  readString,
  requireObject,
  requireObjects,
  type StreamPart,
  UnreadableChunkError,
  UpstreamReportedError,
  type UpstreamCall,
} from "../../src/providers/plugin-api.js";
import { carriedChatBody } from "./carried-body.js";
import { chunkReader } from "./chunk-reader.js";
import { applyReasoningControls } from "./reasoning-controls.js";
import { applyRequestNames } from "./request-names.js";
import { extraFragment, type OnSkip, placeExtras } from "./tool-call-extra.js";
import { usageOf } from "./usage.js";

/** An event that decodes to no part (shared: the consumer only reads it). */
const NOTHING: readonly StreamPart[] = [];

/**
 * OpenAI-style chat completions, as DeepSeek, Kimi, OpenRouter, Groq, vLLM
 * and friends speak it. Read tolerantly: reasoning arrives as
 * `reasoning_content`, `reasoning`, `reasoning_details[]`, or as Mistral's
 * `{type:"thinking"}` content chunks; anything unknown is ignored. A tool
 * call's `extra_content` is kept as the native record (tool-call-extra.ts);
 * `onSkip` hears of each function call sent with Google's skip signature.
 */
export function createOpenAICompatibleCodec(onSkip: OnSkip): HttpCodec {
  return {
    buildRequest(call: UpstreamCall) {
      const messages = placeExtras(call, onSkip);
      return openAICompatibleCodec.buildRequest(messages === call.body.messages ? call : { ...call, body: { ...call.body, messages } });
    },
    buildCarriedRequest(call, carried) {
      // the client's openai-* headers as it sent them (its organization, project, betas), then routes.yaml's, then the route's key
      const headers: Record<string, string> = {
        "content-type": "application/json",
        accept: call.stream ? "text/event-stream" : "application/json",
        ...carried.headers,
        ...call.provider.headers,
      };
      if (call.apiKey) headers.authorization = `Bearer ${call.apiKey}`;
      return { url: `${call.provider.baseUrl}/chat/completions`, headers, body: carriedChatBody(call, carried, placeExtras(call, onSkip)) };
    },
    decodeResponse: (body) => openAICompatibleCodec.decodeResponse(body),
    createStreamDecoder: () => openAICompatibleCodec.createStreamDecoder(),
  };
}

/** The codec without a record to place: what plugins that build on this wire format (copilot) send through. */
export const openAICompatibleCodec: HttpCodec = {
  buildRequest(call: UpstreamCall) {
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: call.stream ? "text/event-stream" : "application/json",
      ...call.provider.headers,
    };
    if (call.apiKey) headers.authorization = `Bearer ${call.apiKey}`;
    return {
      url: `${call.provider.baseUrl}/chat/completions`,
      headers,
      body: chatBodyBytes(applyReasoningControls(applyRequestNames(call.body, call.dialect), call.reasoning, call.dialect)),
    };
  },

  decodeResponse(body: JsonObject): StreamPart[] {
    // some upstreams answer 200 with only an error object; that is not an empty answer
    const error = readObject(body.error);
    if (error && !Array.isArray(body.choices)) throw new UpstreamStreamError(error);
    const parts: StreamPart[] = [metadata(body)];
    const choice = firstChoice(body);
    const message = readObject(choice?.message);
    if (message) {
      decodeMessage(message, parts);
      readArray(message.tool_calls)?.forEach((entry, position) => {
        const call = requireObject(entry, TOOL_CALL);
        const fn = readObject(call.function);
        parts.push({
          type: "tool-call-delta",
          index: position,
          id: readString(call.id),
          name: readString(fn?.name),
          arguments: readString(fn?.arguments) ?? "",
        });
        const record = extraFragment(position, call);
        if (record) parts.push({ type: "native-record", record });
      });
    }
    const usage = usageOf(body);
    if (usage) parts.push({ type: "usage", usage });
    const reason = readString(choice?.finish_reason);
    if (reason !== undefined) parts.push(finishPart(reason, choice));
    return parts;
  },

  createStreamDecoder() {
    let sawMetadata = false;
    const read = chunkReader();
    return ({ data }) => {
      const view = read(data);
      if (!view) {
        // an event with no data is nothing; one that cannot be read ends the turn as incomplete, never silently dropped (its content is lost)
        if (data.trim() === "") return NOTHING;
        throw new UnreadableChunkError(data);
      }
      const { fields: chunk, choice, plain } = view;
      // OpenRouter and others report a failure after the stream started as a chunk with `error`;
      // dropping it would end the answer as if it were complete, so the relay is told instead.
      const error = readObject(chunk.error);
      if (error) throw new UpstreamStreamError(error);
      // most of a stream: one delta string, after the metadata was taken — the part itself, no array around it
      if (plain && sawMetadata) return plain.text ? plain : NOTHING;
      const parts: StreamPart[] = [];
      if (!sawMetadata && (chunk.id || chunk.model)) {
        parts.push(metadata(chunk));
        sawMetadata = true;
      }
      if (plain) {
        if (plain.text) parts.push(plain);
      } else {
        const delta = readObject(choice?.delta);
        if (delta) {
          decodeMessage(delta, parts);
          const toolCalls = readArray(delta.tool_calls);
          if (toolCalls) {
            for (const entry of toolCalls) {
              const call = requireObject(entry, TOOL_CALL);
              const fn = readObject(call.function);
              const index = typeof call.index === "number" ? call.index : 0;
              parts.push({ type: "tool-call-delta", index, id: readString(call.id), name: readString(fn?.name), arguments: readString(fn?.arguments) });
              const record = extraFragment(index, call);
              if (record) parts.push({ type: "native-record", record });
            }
          }
        }
      }
      const usage = usageOf(chunk);
      if (usage) parts.push({ type: "usage", usage });
      const reason = readString(choice?.finish_reason);
      if (reason !== undefined) parts.push(finishPart(reason, choice));
      return parts;
    };
  },
};

/** An error the upstream sent inside a 200 (in its stream, or as the whole body); the core relays it as an upstream error, OpenAI's code kept. */
class UpstreamStreamError extends UpstreamReportedError {
  constructor(detail: JsonObject) {
    super(detail, `the upstream reported an error: ${readString(detail.message) ?? JSON.stringify(detail)}`);
  }
}

/** Reasoning and text of one message or delta. One reasoning text, whichever name it came under. */
function decodeMessage(message: JsonObject, parts: StreamPart[]): void {
  const reasoning = nonEmpty(message.reasoning_content) ?? nonEmpty(message.reasoning);
  if (reasoning) parts.push({ type: "reasoning-delta", text: reasoning });
  // the core merges the entries by their index (docs/sessions-and-replay.md#what-is-stored): passed on as they came, each must be an object
  const details = readArray(message.reasoning_details);
  if (details && details.length > 0) parts.push({ type: "reasoning-details-delta", details: requireObjects(details, REASONING_DETAIL) });
  const content = message.content;
  if (typeof content === "string") {
    if (content) parts.push({ type: "text-delta", text: content });
  } else if (Array.isArray(content)) {
    // Mistral's Magistral: [{type:"thinking", thinking:[{type:"text", text}]}, {type:"text", text}]
    for (const entry of content) {
      const chunk = requireObject(entry, CONTENT_CHUNK);
      const thinking = chunk.type === "thinking" ? readArray(chunk.thinking) : undefined;
      if (thinking) {
        const text = thinking.map((inner) => readString(requireObject(inner, THINKING_CHUNK).text) ?? "").join("");
        if (text) parts.push({ type: "reasoning-delta", text });
      } else if (chunk.type === "text" && typeof chunk.text === "string" && chunk.text) {
        parts.push({ type: "text-delta", text: chunk.text });
      }
    }
  }
}

/** The first choice; anything but an object there (null included) is no choice, as before. */
export function firstChoice(body: JsonObject): JsonObject | undefined {
  const choices = readArray(body.choices);
  return choices === undefined ? undefined : readObject(choices[0]);
}

/** The answer's id and model, and how it was served (`service_tier`, `system_fingerprint`) when the upstream says: every chunk repeats them, the first is read. */
function metadata(body: JsonObject): StreamPart {
  const part: StreamPart = { type: "response-metadata", id: readString(body.id), model: readString(body.model) };
  const tier = readString(body.service_tier);
  if (tier !== undefined) part.serviceTier = tier;
  const fingerprint = readString(body.system_fingerprint);
  if (fingerprint !== undefined) part.systemFingerprint = fingerprint;
  return part;
}

/** What each list entry must be, as an upstream error names it. */
const TOOL_CALL = "a tool_calls entry";
const CONTENT_CHUNK = "a content chunk";
const THINKING_CHUNK = "a thinking chunk";
const REASONING_DETAIL = "a reasoning_details entry";

function nonEmpty(value: unknown): string | undefined {
  return typeof value === "string" && value.length > 0 ? value : undefined;
}

/**
 * The finish, with the stop sequence that ended the answer where the host
 * names it: vLLM and SGLang put the matched string in `choices[].stop_reason`
 * (a number there is a stop token's id, not a sequence).
 */
function finishPart(reason: string, choice: JsonObject | undefined): StreamPart {
  const matched = reason === "stop" ? readString(choice?.stop_reason) : undefined;
  return matched === undefined ? { type: "finish", reason } : { type: "finish", reason, stopSequence: matched };
}

import { chatBodyBytes, type HttpCodec, type JsonObject, type StreamPart, UnreadableChunkError, type UpstreamCall, type Usage } from "../../src/plugins/plugin-api.js";
import { chunkReader } from "./chunk-reader.js";
import { applyReasoningControls } from "./reasoning-controls.js";
import { applyRequestNames } from "./request-names.js";

/** An event that decodes to no part (shared: the consumer only reads it). */
const NOTHING: readonly StreamPart[] = [];

/**
 * OpenAI-style chat completions, as DeepSeek, Kimi, OpenRouter, Groq, vLLM
 * and friends speak it. Read tolerantly: reasoning arrives as
 * `reasoning_content`, `reasoning`, `reasoning_details[]`, or as Mistral's
 * `{type:"thinking"}` content chunks; anything unknown is ignored.
 */
export const openAICompatibleCodec: HttpCodec = {
  buildRequest(call: UpstreamCall) {
    const headers: Record<string, string> = { "content-type": "application/json", accept: call.stream ? "text/event-stream" : "application/json", ...call.provider.headers };
    if (call.apiKey) headers.authorization = `Bearer ${call.apiKey}`;
    return { url: `${call.provider.baseUrl}/chat/completions`, headers, body: chatBodyBytes(applyReasoningControls(applyRequestNames(call.body, call.dialect), call.reasoning, call.dialect)) };
  },

  decodeResponse(body: JsonObject): StreamPart[] {
    // some upstreams answer 200 with only an error object; that is not an empty answer
    if (body.error && typeof body.error === "object" && !Array.isArray(body.choices)) throw new UpstreamStreamError(body.error as JsonObject);
    const parts: StreamPart[] = [metadata(body)];
    const choice = firstChoice(body);
    const message = (choice?.message ?? {}) as JsonObject;
    decodeMessage(message, parts);
    const toolCalls = Array.isArray(message.tool_calls) ? (message.tool_calls as JsonObject[]) : [];
    toolCalls.forEach((call, position) => {
      const fn = (call.function ?? {}) as JsonObject;
      parts.push({ type: "tool-call-delta", index: position, id: str(call.id), name: str(fn.name), arguments: str(fn.arguments) ?? "" });
    });
    if (body.usage && typeof body.usage === "object") parts.push({ type: "usage", usage: body.usage as unknown as Usage });
    if (typeof choice?.finish_reason === "string") parts.push({ type: "finish", reason: choice.finish_reason });
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
      if (chunk.error && typeof chunk.error === "object") throw new UpstreamStreamError(chunk.error as JsonObject);
      // most of a stream: one delta string, after the metadata was taken — the part itself, no array around it
      if (plain && sawMetadata) return plain.text ? plain : NOTHING;
      const parts: StreamPart[] = [];
      if (!sawMetadata && (chunk.id || chunk.model)) {
        parts.push(metadata(chunk));
        sawMetadata = true;
      }
      if (plain) {
        if (plain.text) parts.push(plain);
      } else if (choice?.delta && typeof choice.delta === "object") {
        const delta = choice.delta as JsonObject;
        decodeMessage(delta, parts);
        if (Array.isArray(delta.tool_calls)) {
          for (const call of delta.tool_calls as JsonObject[]) {
            const fn = (call.function ?? {}) as JsonObject;
            parts.push({ type: "tool-call-delta", index: typeof call.index === "number" ? call.index : 0, id: str(call.id), name: str(fn.name), arguments: str(fn.arguments) });
          }
        }
      }
      if (chunk.usage && typeof chunk.usage === "object") parts.push({ type: "usage", usage: chunk.usage as unknown as Usage });
      if (typeof choice?.finish_reason === "string") parts.push({ type: "finish", reason: choice.finish_reason });
      return parts;
    };
  },
};

/** An error the upstream sent inside a 200 (in its stream, or as the whole body); the core relays it as an upstream error. */
class UpstreamStreamError extends Error {
  constructor(readonly detail: JsonObject) {
    super(`the upstream reported an error: ${str(detail.message) ?? JSON.stringify(detail)}`);
    this.name = "UpstreamStreamError";
  }
}

/** Reasoning and text of one message or delta. One reasoning text, whichever name it came under (SPEC §12.1). */
function decodeMessage(message: JsonObject, parts: StreamPart[]): void {
  const reasoning = nonEmpty(message.reasoning_content) ?? nonEmpty(message.reasoning);
  if (reasoning) parts.push({ type: "reasoning-delta", text: reasoning });
  if (Array.isArray(message.reasoning_details) && message.reasoning_details.length > 0) {
    parts.push({ type: "reasoning-details-delta", details: message.reasoning_details as JsonObject[] });
  }
  const content = message.content;
  if (typeof content === "string") {
    if (content) parts.push({ type: "text-delta", text: content });
  } else if (Array.isArray(content)) {
    // Mistral's Magistral: [{type:"thinking", thinking:[{type:"text", text}]}, {type:"text", text}]
    for (const chunk of content as JsonObject[]) {
      if (chunk.type === "thinking" && Array.isArray(chunk.thinking)) {
        const text = (chunk.thinking as JsonObject[]).map((inner) => str(inner.text) ?? "").join("");
        if (text) parts.push({ type: "reasoning-delta", text });
      } else if (chunk.type === "text" && typeof chunk.text === "string" && chunk.text) {
        parts.push({ type: "text-delta", text: chunk.text });
      }
    }
  }
}

function firstChoice(body: JsonObject): JsonObject | undefined {
  return Array.isArray(body.choices) ? (body.choices[0] as JsonObject | undefined) : undefined;
}

function metadata(body: JsonObject): StreamPart {
  return { type: "response-metadata", id: str(body.id), model: str(body.model) };
}

function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

function nonEmpty(value: unknown): string | undefined {
  return typeof value === "string" && value.length > 0 ? value : undefined;
}

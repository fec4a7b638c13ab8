import type { ChatMessage, HttpCodec, JsonObject, StreamPart, UpstreamCall } from "../../src/plugins/contract.js";
import { openAICompatibleCodec } from "../openai-compatible/codec.js";

/**
 * GitHub Copilot's chat API (`https://api.githubcopilot.com/chat/completions`)
 * is OpenAI chat completions plus two reasoning fields (providers.md §6):
 * `reasoning_text` (readable) and `reasoning_opaque` (encrypted state). This
 * codec is the OpenAI-compatible one with those two added:
 * - in: `reasoning_text` fragments are reasoning; `reasoning_opaque`
 *   fragments (split across chunks around parallel tool calls) are
 *   concatenated in order into the native record;
 * - out: an assistant turn gets its stored `reasoning_opaque` back, and
 *   `reasoning_text` only together with it.
 */
export const copilotCodec: HttpCodec = {
  buildRequest(call: UpstreamCall) {
    const messages = call.body.messages.map(wireMessage);
    return openAICompatibleCodec.buildRequest({ ...call, body: { ...call.body, messages } });
  },

  decodeResponse(body: JsonObject): StreamPart[] {
    const parts = openAICompatibleCodec.decodeResponse(body);
    const message = (firstChoice(body)?.message ?? {}) as JsonObject;
    return [...copilotParts(message), ...parts];
  },

  createStreamDecoder() {
    const decode = openAICompatibleCodec.createStreamDecoder();
    return (event) => {
      const parts = decode(event);
      let chunk: JsonObject;
      try {
        chunk = JSON.parse(event.data) as JsonObject;
      } catch {
        return parts;
      }
      const delta = (firstChoice(chunk)?.delta ?? {}) as JsonObject;
      return [...copilotParts(delta), ...parts];
    };
  },
};

/** Copilot's own fields of one message or delta: reasoning to show, and record fragments. */
function copilotParts(message: JsonObject): StreamPart[] {
  const parts: StreamPart[] = [];
  const text = typeof message.reasoning_text === "string" ? message.reasoning_text : "";
  const opaque = typeof message.reasoning_opaque === "string" ? message.reasoning_opaque : "";
  // the OpenAI codec already shows reasoning_content / reasoning; reasoning_text is shown only when it is the sole one
  if (text && !message.reasoning_content && !message.reasoning) parts.push({ type: "reasoning-delta", text });
  const record: JsonObject = {};
  if (opaque) record.reasoning_opaque = opaque;
  if (text) record.reasoning_text = text;
  if (Object.keys(record).length > 0) parts.push({ type: "native-record", record });
  return parts;
}

/** Folds fragments: both fields concatenate in arrival order. */
export function mergeCopilotRecord(collected: JsonObject | undefined, fragment: JsonObject): JsonObject {
  const merged: JsonObject = { ...collected };
  for (const key of ["reasoning_opaque", "reasoning_text"] as const) {
    if (typeof fragment[key] === "string") merged[key] = (typeof merged[key] === "string" ? merged[key] : "") + fragment[key];
  }
  return merged;
}

/**
 * The assistant message as Copilot reads it. The stored record wins over
 * what the client sent (SPEC §12.3); `reasoning_text` never goes alone.
 */
function wireMessage(message: ChatMessage): ChatMessage {
  if (message.role !== "assistant") return message;
  const { native_record: record, ...wire } = message;
  const opaque = typeof record?.reasoning_opaque === "string" && record.reasoning_opaque ? record.reasoning_opaque : undefined;
  if (opaque) {
    wire.reasoning_opaque = opaque;
    if (typeof record?.reasoning_text === "string" && record.reasoning_text) wire.reasoning_text = record.reasoning_text;
    else delete wire.reasoning_text;
  } else if (typeof wire.reasoning_opaque !== "string" || !wire.reasoning_opaque) {
    delete wire.reasoning_opaque;
    delete wire.reasoning_text;
  }
  return wire;
}

function firstChoice(body: JsonObject): JsonObject | undefined {
  return Array.isArray(body.choices) ? (body.choices[0] as JsonObject | undefined) : undefined;
}

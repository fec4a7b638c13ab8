import {
  type ChatMessage,
  type HttpCodec,
  type JsonObject,
  parseObject,
  partsOf,
  readArray,
  readObject,
  readString,
  requireObject,
  type StreamPart,
  type UpstreamCall,
  shown,
} from "../../src/providers/plugin-api.js";
import { firstChoice, openAICompatibleCodec } from "../openai-compatible/codec.js";

/**
 * GitHub Copilot's chat API (`https://api.githubcopilot.com/chat/completions`)
 * is OpenAI chat completions plus two reasoning fields (as opencode's Copilot client
 * speaks it: https://github.com/anomalyco/opencode, `packages/opencode/src/provider/sdk/copilot/chat/`):
 * `reasoning_text` (readable) and `reasoning_opaque` (encrypted state). This
 * codec is the OpenAI-compatible one with those two added:
 * - in: `reasoning_text` fragments are reasoning; `reasoning_opaque`
 *   fragments (split across chunks around parallel tool calls) are
 *   concatenated in order into the native record;
 * - out: an assistant turn gets its stored `reasoning_opaque` back, and
 *   `reasoning_text` only together with it.
 * For Gemini models Copilot also signs tool calls
 * (`tool_calls[i].function.thought_signature`, hermes-agent, https://github.com/NousResearch/hermes-agent, `agent/reasoning_carriers.py`): kept
 * per tool-call id and put back on the same call.
 */
export const copilotCodec: HttpCodec = {
  buildRequest(call: UpstreamCall) {
    const messages = call.body.messages.map(wireMessage);
    return openAICompatibleCodec.buildRequest({ ...call, body: { ...call.body, messages } });
  },

  decodeResponse(body: JsonObject): StreamPart[] {
    const parts = openAICompatibleCodec.decodeResponse(body);
    const message = readObject(firstChoice(body)?.message);
    return message ? [...copilotParts(message, new Map()), ...parts] : parts;
  },

  createStreamDecoder() {
    const decode = openAICompatibleCodec.createStreamDecoder();
    const ids = new Map<number, string>(); // a streamed tool call names its id once, by index
    return (event) => {
      const parts = partsOf(decode(event));
      // the OpenAI codec threw for a chunk that is not an object, so this one is
      const chunk = parseObject(event.data);
      const delta = chunk && readObject(firstChoice(chunk)?.delta);
      return delta ? [...copilotParts(delta, ids), ...parts] : parts;
    };
  },
};

/** Copilot's own fields of one message or delta: reasoning to show, and record fragments. */
function copilotParts(message: JsonObject, ids: Map<number, string>): StreamPart[] {
  const parts: StreamPart[] = [];
  const text = typeof message.reasoning_text === "string" ? message.reasoning_text : "";
  const opaque = typeof message.reasoning_opaque === "string" ? message.reasoning_opaque : "";
  // the OpenAI codec already shows reasoning_content / reasoning; reasoning_text is shown only when it is the sole one
  if (text && !message.reasoning_content && !message.reasoning) parts.push({ type: "reasoning-delta", text });
  const record: JsonObject = {};
  if (opaque) record.reasoning_opaque = opaque;
  if (text) record.reasoning_text = text;
  const signatures = toolSignatures(message, ids);
  if (signatures) record.tool_signatures = signatures;
  if (Object.keys(record).length > 0) parts.push({ type: "native-record", record });
  return parts;
}

/** `function.thought_signature` of each tool call in a message or delta, by tool-call id. */
function toolSignatures(message: JsonObject, ids: Map<number, string>): JsonObject | undefined {
  const toolCalls = readArray(message.tool_calls);
  if (!toolCalls) return undefined;
  const found: JsonObject = {};
  toolCalls.forEach((entry, position) => {
    const call = requireObject(entry, "a tool_calls entry");
    const index = typeof call.index === "number" ? call.index : position;
    const callId = readString(call.id);
    if (callId) ids.set(index, callId);
    const signature = readObject(call.function)?.thought_signature;
    const id = ids.get(index) ?? callId;
    if (typeof signature === "string" && signature && id) found[id] = signature;
  });
  return Object.keys(found).length > 0 ? found : undefined;
}

/** Folds fragments: text fields concatenate in arrival order; tool signatures merge by id. */
export function mergeCopilotRecord(collected: JsonObject | undefined, fragment: JsonObject): JsonObject {
  const merged: JsonObject = { ...collected };
  for (const key of ["reasoning_opaque", "reasoning_text"] as const) {
    if (typeof fragment[key] === "string") merged[key] = (typeof merged[key] === "string" ? merged[key] : "") + fragment[key];
  }
  const added = readObject(fragment.tool_signatures);
  if (added) {
    const signatures: JsonObject = { ...readObject(merged.tool_signatures) };
    for (const [id, signature] of Object.entries(added)) {
      signatures[id] = (typeof signatures[id] === "string" ? signatures[id] : "") + shown(signature);
    }
    merged.tool_signatures = signatures;
  }
  return merged;
}

/**
 * The assistant message as Copilot reads it. The stored record wins over
 * what the client sent (replay rule 3, docs/sessions-and-replay.md#replay-rules); `reasoning_text` never goes alone.
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
  const signatures = readObject(record?.tool_signatures);
  if (signatures && wire.tool_calls) {
    wire.tool_calls = wire.tool_calls.map((call) => {
      const signature = signatures[call.id];
      return typeof signature === "string" ? { ...call, function: { ...call.function, thought_signature: signature } } : call;
    });
  }
  return wire;
}

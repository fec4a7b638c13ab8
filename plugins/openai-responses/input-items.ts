import { type ChatMessage, type JsonObject, readObject, readString, textOf, type ToolCall } from "../../src/providers/plugin-api.js";
import { itemsFor, type RecordItem } from "./output-record.js";

/**
 * Canonical chat messages → Responses API `input` items
 * (https://platform.openai.com/docs/api-reference/responses/create): system
 * and developer messages stay messages of their role, tool results become
 * `function_call_output` items, and an assistant turn becomes its output
 * items again — its stored reasoning items verbatim, in place before the
 * function calls they preceded, when the turn's record is this model's.
 * `developerRole` is the role a developer message is sent as (routes.yaml `dialects`).
 *
 * Returned as JSON text (the array's members, comma-joined). A
 * replayed assistant turn is the same message object on every request of a
 * conversation (the core's replay memo) and most of the bytes — its blobs run
 * to kilobytes — so its JSON is built once per model and reused.
 */
export function inputItemsJson(messages: readonly ChatMessage[], model: string, developerRole: "developer" | "system"): string {
  const pieces: string[] = [];
  for (const message of messages) {
    if (message.role !== "assistant") {
      for (const item of itemsOf(message, model, developerRole)) pieces.push(JSON.stringify(item));
      continue;
    }
    const memo = assistantJson.get(message);
    if (memo?.model === model) {
      if (memo.json) pieces.push(memo.json);
      continue;
    }
    const json = itemsOf(message, model, developerRole)
      .map((item) => JSON.stringify(item))
      .join(",");
    assistantJson.set(message, { model, json });
    if (json) pieces.push(json);
  }
  return pieces.join(",");
}

/** The JSON of an assistant turn's items, by message object and the model it was built for (see inputItemsJson). */
const assistantJson = new WeakMap<ChatMessage, { model: string; json: string }>();

function itemsOf(message: ChatMessage, model: string, developerRole: "developer" | "system"): JsonObject[] {
  switch (message.role) {
    case "system":
      return [{ type: "message", role: "system", content: textOf(message.content) }];
    case "developer":
      return [{ type: "message", role: developerRole, content: textOf(message.content) }];
    case "user":
      return [{ type: "message", role: "user", content: userContent(message.content) }];
    case "tool":
      return [{ type: "function_call_output", call_id: message.tool_call_id ?? "", output: textOf(message.content) }];
    case "assistant":
      return assistantItems(message, itemsFor(message.native_record, model));
    default:
      return [];
  }
}

/**
 * One assistant turn as output items. With the record, its order is the
 * stored one: each reasoning item untouched, the client's text where the
 * message was, each call where it was (with its item id, which ties it to
 * the reasoning before it). Without one (another model's turn, or one
 * carrierd never saw): the text, then the calls, no reasoning and no item
 * ids — an id would name an item this model cannot look up under `store: false`.
 */
function assistantItems(message: ChatMessage, layout: RecordItem[] | undefined): JsonObject[] {
  const text = textOf(message.content);
  const calls = message.tool_calls ?? [];
  const out: JsonObject[] = [];
  if (!layout) {
    if (text) out.push(assistantText(text));
    for (const call of calls) out.push(functionCall(call, undefined));
    return out;
  }
  const byId = new Map(calls.map((call) => [call.id, call]));
  const placed = new Set<string>();
  let textPlaced = false;
  for (const item of layout) {
    if (item.type === "reasoning") out.push(item);
    else if (item.type === "message") {
      if (!textPlaced && text) out.push(assistantText(text));
      textPlaced = true;
    } else {
      const call = byId.get(item.call_id);
      if (!call || placed.has(call.id)) continue;
      out.push(functionCall(call, item.id));
      placed.add(call.id);
    }
  }
  if (!textPlaced && text) out.push(assistantText(text));
  for (const call of calls) if (!placed.has(call.id)) out.push(functionCall(call, undefined));
  // a reasoning item must be followed by the item it led to: one whose turn the client cut short is left out
  while (out.at(-1)?.type === "reasoning") out.pop();
  return out;
}

function assistantText(text: string): JsonObject {
  return { type: "message", role: "assistant", content: text };
}

function functionCall(call: ToolCall, itemId: string | undefined): JsonObject {
  const item: JsonObject = { type: "function_call", call_id: call.id, name: call.function.name, arguments: call.function.arguments };
  if (itemId !== undefined) item.id = itemId;
  return item;
}

/** A user message's content: a string stays one; text, image and file parts become the Responses API's input parts. */
function userContent(content: ChatMessage["content"]): string | JsonObject[] {
  if (!Array.isArray(content)) return typeof content === "string" ? content : "";
  const parts: JsonObject[] = [];
  for (const part of content) {
    if (part.type === "text" && typeof part.text === "string") parts.push({ type: "input_text", text: part.text });
    else if (part.type === "image_url") {
      const url = typeof part.image_url === "string" ? part.image_url : readString(readObject(part.image_url)?.url);
      if (url !== undefined) parts.push({ type: "input_image", image_url: url, detail: readString(readObject(part.image_url)?.detail) ?? "auto" });
    } else if (part.type === "file") {
      const file = readObject(part.file);
      const data = readString(file?.file_data);
      if (data !== undefined) parts.push({ type: "input_file", file_data: data, filename: readString(file?.filename) ?? "file.pdf" });
    }
  }
  return parts;
}

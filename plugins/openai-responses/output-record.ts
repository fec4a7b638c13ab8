import { isJsonObject, type Json, type JsonObject } from "../../src/providers/plugin-api.js";

/**
 * The native record of one assistant turn (native.schema.json): the model
 * that answered, and the turn's output items in the order the Responses API
 * produced them. A reasoning item is kept whole and verbatim — its
 * `encrypted_content` is the reasoning itself under `store: false`, and
 * only that model can read it back; a message or function call is kept as
 * its place in the order (its text and arguments are the turn's own).
 */
export interface OutputRecord {
  model: string;
  output: RecordItem[];
}

export type ReasoningItem = JsonObject & { type: "reasoning"; id?: string; encrypted_content: string };
export type RecordItem = ReasoningItem | { type: "message" } | { type: "function_call"; call_id: string; id?: string };

/** The keys of a reasoning item that go back into `input` (the Responses API refuses others there, `status` aside). */
const REASONING_KEYS = ["type", "id", "summary", "content", "encrypted_content"] as const;

/**
 * The stored form of a reasoning output item, or undefined when it has no
 * blob (it could not be replayed under `store: false`). The id is kept when
 * there is one; xAI's items come without
 * (https://docs.x.ai/developers/advanced-api-usage/troubleshooting-reasoning).
 */
export function reasoningEntry(item: JsonObject): ReasoningItem | undefined {
  if (typeof item.encrypted_content !== "string" || item.encrypted_content === "") return undefined;
  const kept: JsonObject = {};
  for (const key of REASONING_KEYS) if (item[key] !== undefined && item[key] !== null) kept[key] = item[key];
  return kept as ReasoningItem;
}

/** Folds record fragments: items arrive one at a time as the stream closes them. */
export function mergeOutput(collected: JsonObject | undefined, fragment: JsonObject): JsonObject {
  const before = Array.isArray(collected?.output) ? collected.output : [];
  const added = Array.isArray(fragment.output) ? fragment.output : [];
  const model = typeof fragment.model === "string" ? fragment.model : collected?.model;
  return { model: model ?? "", output: [...before, ...added] };
}

/**
 * The record's items when it was produced by `model`, else undefined: an
 * encrypted blob is bound to the model that issued it, so another model —
 * even behind the same provider — gets none (docs/plugins.md#openai-responses).
 */
export function itemsFor(record: JsonObject | undefined, model: string): RecordItem[] | undefined {
  if (!record || record.model !== model || !Array.isArray(record.output)) return undefined;
  return record.output.filter(isRecordItem);
}

function isRecordItem(item: Json): item is JsonObject & RecordItem {
  if (!isJsonObject(item)) return false;
  switch (item.type) {
    case "reasoning":
      return typeof item.encrypted_content === "string" && item.encrypted_content !== "";
    case "message":
      return true;
    case "function_call":
      return typeof item.call_id === "string";
    default:
      return false;
  }
}

import { isJsonObject, type ChatMessage, type JsonObject, readObject, readString, type ToolCall, type UpstreamCall } from "../../src/providers/plugin-api.js";
import { validatesSignatures } from "../gemini/request-body.js";
import { SKIP_SIGNATURE } from "../gemini/parts-layout.js";

/**
 * The `extra_content` carrier field (docs/routes.md#what-a-route-sets): the object an upstream puts
 * on a tool call (`tool_calls[i].extra_content`) and wants back on the same
 * call. Gemini's OpenAI-compatible endpoint carries its thought signature
 * there (`{google: {thought_signature}}`,
 * https://ai.google.dev/gemini-api/docs/thought-signatures; as Continue reads
 * it, https://github.com/continuedev/continue/pull/8865) and refuses the next
 * request when the first call of a step lacks it. It is kept as this plugin's
 * native record, so replay hands it back only to the model that produced it
 * (docs/sessions-and-replay.md#replay-rules, rule 7).
 */
export interface ExtraRecord {
  tool_calls: { index: number; id?: string; extra_content: JsonObject }[];
}

/** The record fragment of one tool call that carried `extra_content`, or undefined. */
export function extraFragment(index: number, call: JsonObject): JsonObject | undefined {
  const extra = readObject(call.extra_content);
  if (!extra) return undefined;
  const id = readString(call.id);
  return { tool_calls: [id === undefined ? { index, extra_content: extra } : { index, id, extra_content: extra }] };
}

/** Folds one fragment into the record: a call's entry is its index's; a later fragment for the same call adds what it lacked. */
export function mergeExtra(collected: JsonObject | undefined, fragment: JsonObject): JsonObject {
  const calls = [...entriesOf(collected)];
  for (const entry of entriesOf(fragment)) {
    const at = calls.findIndex((kept) => kept.index === entry.index);
    if (at < 0) calls.push(entry);
    else calls[at] = { ...calls[at], ...entry, extra_content: { ...calls[at].extra_content, ...entry.extra_content } };
  }
  return { tool_calls: calls } satisfies ExtraRecord;
}

function entriesOf(record: JsonObject | undefined): ExtraRecord["tool_calls"] {
  const calls = record?.tool_calls;
  if (!Array.isArray(calls)) return [];
  return calls.filter(
    (entry): entry is JsonObject & ExtraRecord["tool_calls"][number] =>
      isJsonObject(entry) && typeof entry.index === "number" && isJsonObject(entry.extra_content),
  );
}

/** A function call without a thought signature, on a route that checks them: named for the debug line. */
export type OnSkip = (model: string, name: string) => void;

/**
 * The messages as they go upstream. The record key never leaves carrierd.
 * Where the route lists `extra_content`, each stored object goes back on
 * its call (by id, else by position), verbatim and in place of whatever the
 * client sent for it; a client's own is kept where nothing is stored. For a
 * Gemini 3 or later model (Google's endpoint, or a gateway in front of it),
 * an assistant message whose calls then carry no thought signature at all — history from another
 * model, or from before carrierd — gets Google's documented skip value on
 * its first call (https://ai.google.dev/gemini-api/docs/thought-signatures),
 * never a call whose signature carrierd holds.
 */
export function placeExtras(call: UpstreamCall, onSkip: OnSkip): ChatMessage[] {
  const messages = call.body.messages;
  const reads = call.policy.fields.includes("extra_content");
  const skips = reads && validatesSignatures(call.model);
  if (!messages.some((message) => message.native_record !== undefined || (skips && message.role === "assistant" && message.tool_calls?.length)))
    return messages;
  return messages.map((message) => {
    if (message.role !== "assistant") return message;
    const { native_record: record, ...rest } = message;
    if (!reads || !rest.tool_calls?.length) return record === undefined ? message : rest;
    const stored = entriesOf(record);
    let calls: ToolCall[] = rest.tool_calls.map((tool, position) => {
      const entry =
        stored.find((kept) => kept.id !== undefined && kept.id === tool.id) ?? stored.find((kept) => kept.id === undefined && kept.index === position);
      return entry ? { ...tool, extra_content: entry.extra_content } : tool;
    });
    if (skips && !calls.some(signed)) {
      calls = [
        { ...calls[0], extra_content: { ...calls[0].extra_content, google: { ...googleOf(calls[0]), thought_signature: SKIP_SIGNATURE } } },
        ...calls.slice(1),
      ];
      onSkip(call.model, calls[0].function.name);
    }
    return { ...rest, tool_calls: calls };
  });
}

function googleOf(call: ToolCall): JsonObject {
  return readObject(call.extra_content?.google) ?? {};
}

function signed(call: ToolCall): boolean {
  const signature = googleOf(call).thought_signature;
  return typeof signature === "string" && signature.length > 0;
}

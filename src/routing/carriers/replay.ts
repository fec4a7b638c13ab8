import type { CarrierField, ChatMessage, Json } from "../../providers/contract.js";
import type { ReplaySource } from "../../storage/turns.js";
import { markRecurring } from "../../providers/chat-json.js";
import { sameJson } from "../../foundation/util/same-json.js";
import type { ModelFamily } from "./model-family.js";
import { splitInlineContent } from "./inline-reasoning.js";
import { isRecord } from "../../foundation/util/json-readers.js";

/** Who receives this request's carriers. */
export interface ReplayTarget {
  readonly plugin: string;
  readonly upstreamModel: string;
  /** The route's effective fields (fields minus verdicts minus opt-out). */
  readonly effective: readonly CarrierField[];
  /** routes.yaml `native`; false withholds native records too. */
  readonly native: boolean;
  /** Whether `plugin` declares a native record type at all. */
  readonly pluginHasNative: boolean;
  /** The route table's model-family rule (routes.yaml `model_family`), for signed and encrypted carriers (rule 7). */
  readonly family: ModelFamily;
}

/** What replay attached to one message, for the per-request debug line (names only); messages it attached nothing to are left out. */
export interface AttachedFields {
  readonly index: number;
  readonly turn: string | undefined;
  readonly fields: string[];
}

const PLAIN_FIELDS = ["reasoning_content", "reasoning"] as const;

/**
 * Attaches stored carriers to the assistant messages going upstream (docs/sessions-and-replay.md#replay-rules,
 * rules 3, 6, 7). Stored wins over what the client sent; a
 * client-sent value is used only when nothing is stored. Plain reasoning text
 * goes under every effective plain field; `reasoning_details` is only ever the
 * verbatim stored array (same object, never rebuilt). Stripping of what is not
 * effective, and the must-echo placeholder, follow in `shapeMessages`.
 * The input is never modified: a message is copied only when it changes.
 */
export function attachStoredCarriers(
  messages: readonly ChatMessage[],
  sources: ReadonlyMap<number, ReplaySource>,
  target: ReplayTarget,
): { messages: ChatMessage[]; attached: AttachedFields[] } {
  const attached: AttachedFields[] = [];
  const targetKey = keyOf(target);
  const out = messages.slice();
  let promptStart = 0;
  messages.forEach((message, index) => {
    if (message.role !== "assistant") return;
    const source = sources.get(index);
    const memo = source ? replayed.get(source) : undefined;
    const reuse = memo && memo.target === targetKey && sameJson(memo.client, message) ? memo : undefined;
    const { message: wire, fields } = reuse ?? attachTo(message, source, target);
    if (source) reusePrompt(out, promptStart, index, reuse);
    if (source && !reuse && !(FOR_ONE_REQUEST in source) && charsWithin(message, MEMO_MAX_CHARS) >= 0) {
      // a prompt too large to keep (a pasted document, an image as a data URL) is serialised anew each time
      const prompt = charsWithin(out.slice(promptStart, index), MEMO_MAX_CHARS) >= 0 ? out.slice(promptStart, index) : [];
      prompt.forEach(markRecurring);
      replayed.set(source, { client: message, target: targetKey, message: wire, fields, prompt });
      markRecurring(wire);
    }
    if (fields.length > 0) attached.push({ index, turn: source?.id, fields });
    out[index] = wire;
    promptStart = index + 1;
  });
  return { messages: out, attached };
}

/**
 * Marks carriers read from the request they replay into (a client's own
 * thinking blocks on an Anthropic route): a new object on every request, so
 * a memo entry keyed by one would never be found again, and none is made.
 * Measuring and marking a 100-turn history's messages for such entries cost
 * a carried Messages request a few percent of its CPU. A property, not a
 * WeakSet: adding to a weak collection costs more than the memo's lookups.
 */
export const FOR_ONE_REQUEST: unique symbol = Symbol("carriers for one request");

/** A source made from the request being served (see FOR_ONE_REQUEST). */
export type OneRequestSource = ReplaySource & { readonly [FOR_ONE_REQUEST]: true };

/**
 * What one memo entry may hold, in characters of its client message and
 * again of its prompt: an entry also keeps the wire message and both their
 * serialised bytes, and lives as long as the replay cache keeps the turn
 * (at most 4,096 turns), so large messages are left out rather than kept.
 */
const MEMO_MAX_CHARS = 32 * 1024;

/** `budget` less the characters of every string in `value` (keys too), or -1 once that goes below 0; stops there. */
function charsWithin(value: unknown, budget: number): number {
  if (typeof value === "string") return budget - value.length;
  if (value === null || typeof value !== "object") return budget;
  if (Array.isArray(value)) {
    for (const item of value) if ((budget = charsWithin(item, budget)) < 0) return -1;
    return budget;
  }
  if (!isRecord(value)) return budget;
  for (const key in value) if ((budget = charsWithin(value[key], budget - key.length)) < 0) return -1;
  return budget;
}

/**
 * The messages before a stored turn's assistant message (its prompt: the
 * user's message, tool results) as they were sent the last time, when the
 * client resent them unchanged: the same objects, so their JSON is kept too.
 */
function reusePrompt(out: ChatMessage[], start: number, end: number, memo: ReplayMemo | undefined): void {
  const prompt = memo?.prompt;
  if (!prompt || prompt.length !== end - start) return;
  for (let offset = 0; offset < prompt.length; offset++) if (!sameJson(prompt[offset], out[start + offset])) return;
  for (let offset = 0; offset < prompt.length; offset++) out[start + offset] = prompt[offset]!;
}

/**
 * The last replay of each stored turn: the client's message, the target,
 * and what went upstream (the turn's message and the prompt before it). A stateless client resends the same assistant
 * message every turn; when it and the target are unchanged, the same wire
 * message is handed out again, and its JSON (see markRecurring) with it.
 * Weak: an entry goes when the replay cache drops the turn's carriers.
 */
const replayed = new WeakMap<ReplaySource, ReplayMemo>();

interface ReplayMemo {
  readonly client: ChatMessage;
  readonly target: string;
  readonly message: ChatMessage;
  readonly fields: string[];
  /** The messages that asked for the turn, as they went upstream with it. */
  readonly prompt: readonly ChatMessage[];
}

function keyOf(target: ReplayTarget): string {
  return `${target.plugin}\n${target.upstreamModel}\n${target.effective.join(",")}\n${target.native}\n${target.pluginHasNative}\n${target.family.key}`;
}

/**
 * One assistant message with its stored carriers attached: a copy when anything changes.
 * Reasoning a client inlined in the content is cut out of it when the route
 * has a place of its own for reasoning (an effective field, or the native
 * record going with the message); it is the client's reasoning, used like a
 * client-sent field: only when nothing is stored. A route with no such place
 * gets the content as the client sent it.
 */
function attachTo(message: ChatMessage, source: ReplaySource | undefined, target: ReplayTarget): { message: ChatMessage; fields: string[] } {
  let copy: ChatMessage | undefined;
  const edit = () => (copy ??= { ...message });
  // a client never gets to hand a plugin a native record: only replay sets it
  if ("native_record" in message) delete edit().native_record;
  const fields: string[] = [];
  const inline = target.effective.length > 0 || (target.native && target.pluginHasNative) ? splitInlineContent(message.content) : undefined;
  const text = source?.reasoningText || clientText(message) || inline?.reasoning;
  for (const field of PLAIN_FIELDS) {
    if (!target.effective.includes(field)) continue;
    if (text) {
      if (message[field] !== text) edit()[field] = text;
      fields.push(field);
    }
  }
  if (target.effective.includes("reasoning_details")) {
    const details = storedDetails(source, target) ?? (source?.reasoningDetails ? undefined : clientDetails(message));
    if (details) {
      if (message.reasoning_details !== details) edit().reasoning_details = details;
      fields.push("reasoning_details");
    } else if ("reasoning_details" in message) {
      delete edit().reasoning_details;
    }
  }
  if (
    source?.nativeRecord &&
    target.native &&
    target.pluginHasNative &&
    target.family.sameProducer({ plugin: source.plugin, model: source.upstreamModel }, { plugin: target.plugin, model: target.upstreamModel })
  ) {
    edit().native_record = source.nativeRecord;
    fields.push("native_record");
  }
  if (inline && (target.effective.length > 0 || fields.includes("native_record"))) edit().content = inline.content;
  return { message: copy ?? message, fields };
}

/**
 * The stored array, verbatim — only to the plugin and model family that
 * produced it (rule 7). Its elements are that provider's own structure: signed
 * or encrypted ones are bound to the model, and even a plain `reasoning.text`
 * names its producer's `format`. Another family gets none of it (a partial
 * array would no longer be the provider's own); the plain text still crosses
 * under `reasoning_content` / `reasoning` where the route lists them.
 */
function storedDetails(source: ReplaySource | undefined, target: ReplayTarget): Json[] | undefined {
  const details = source?.reasoningDetails;
  if (!details || details.length === 0) return undefined;
  if (!target.family.sameProducer({ plugin: source.plugin, model: source.upstreamModel }, { plugin: target.plugin, model: target.upstreamModel }))
    return undefined;
  return details;
}

/** One reasoning text whichever name the client used; a blank or " " placeholder is not reasoning. */
function clientText(message: ChatMessage): string | undefined {
  for (const value of [message.reasoning_content, message.reasoning]) {
    if (typeof value === "string" && value.trim().length > 0) return value;
  }
  return undefined;
}

function clientDetails(message: ChatMessage): Json[] | undefined {
  return Array.isArray(message.reasoning_details) && message.reasoning_details.length > 0 ? message.reasoning_details : undefined;
}

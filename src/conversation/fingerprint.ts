import { hash } from "node:crypto";
import type { ChatMessage, ToolCall } from "../providers/contract.js";
import { textOf } from "../providers/message-text.js";
import { GenerationalCache } from "../foundation/util/generational-cache.js";
import { withoutReasoningBlocks } from "./reasoning-blocks.js";
import { isUniqueCallId } from "./call-ids.js";

/**
 * The keys a stored assistant turn is found by, computed the same way for
 * the turn when it is stored and for each assistant message a client sends
 * (docs/sessions-and-replay.md#how-a-request-finds-its-session). `fingerprint` is what every frontend keeps of a turn, its
 * visible text and tool calls, normalised; `callKey` is the ids and names of
 * its tool calls alone, for frontends that blank the text or reshape the
 * arguments, and only when those ids cannot repeat.
 */
export interface TurnKeys {
  readonly fingerprint: string;
  readonly callKey: string | undefined;
}

/**
 * The fingerprint: content null, absent and "" are the same; content parts
 * count by their text; reasoning blocks a frontend left in the text are
 * removed; whitespace is trimmed at both ends and every run of it counts as
 * one space (Open WebUI re-joins text around a cut block with newlines);
 * tool-call arguments compare as canonical JSON, `""` being `{}`; calls are
 * compared in id order, by id, name and arguments.
 */
export function fingerprintOf(content: ChatMessage["content"], toolCalls: readonly ToolCall[] | undefined): string {
  if (typeof content === "string" && !toolCalls?.length && content.length <= MEMO_MAX_CHARS) {
    // every request of a stateless client fingerprints its whole history again: the same texts, turn after turn
    let fingerprint = memo.get(content);
    if (fingerprint === undefined) {
      fingerprint = computeFingerprint(content, undefined);
      memo.set(content, fingerprint);
    }
    return fingerprint;
  }
  return computeFingerprint(content, toolCalls);
}

export function fingerprintMessage(message: ChatMessage): string {
  return fingerprintOf(message.content, message.tool_calls);
}

export function keysOf(content: ChatMessage["content"], toolCalls: readonly ToolCall[] | undefined): TurnKeys {
  if (!toolCalls?.length) return { fingerprint: fingerprintOf(content, toolCalls), callKey: undefined };
  // an agent resends every tool-call turn of its history on every request: the keys of one seen before are looked up
  // by what they are computed from, instead of parsing its arguments and hashing twice again (docs/performance.md#turn-keys-memo)
  const inputs = keyInputsOf(content, toolCalls);
  if (inputs.length > MEMO_MAX_CHARS) return { fingerprint: computeFingerprint(content, toolCalls), callKey: callKeyOf(toolCalls) };
  let keys = callTurnMemo.get(inputs);
  if (keys === undefined) {
    keys = { fingerprint: computeFingerprint(content, toolCalls), callKey: callKeyOf(toolCalls) };
    callTurnMemo.set(inputs, keys);
  }
  return keys;
}

/**
 * Everything the keys of a tool-call turn are computed from, as one string:
 * the content as the client sent it, and each call's id, name and arguments
 * (the call's other fields count for neither key). Two turns with the same
 * string have the same keys.
 */
function keyInputsOf(content: ChatMessage["content"], toolCalls: readonly ToolCall[]): string {
  return JSON.stringify([content ?? null, toolCalls.map((call) => [call.id ?? null, call.function?.name ?? null, call.function?.arguments ?? null])]);
}

/**
 * The second key of a tool-call turn: its calls' ids and names, in id order.
 * Only when every id is one an upstream minted at random (see isUniqueCallId):
 * `call_0` or `functions.get_weather:0` recur in every conversation, and two
 * turns alike in ids and names would be told apart by nothing.
 */
export function callKeyOf(toolCalls: readonly ToolCall[] | undefined): string | undefined {
  if (!toolCalls?.length || !toolCalls.every((call) => isUniqueCallId(call.id))) return undefined;
  const calls = toolCalls.map((call) => [call.id, call.function?.name ?? ""]).sort(byId);
  return `${CALL_KEY_PREFIX}${hash("sha256", JSON.stringify(calls), "base64url").slice(0, 32)}`;
}

/** What starts every call key and no fingerprint (base64url has no ":"): both kinds share one lookup cache and one list of keys. */
export const CALL_KEY_PREFIX = "ids:";

/** Text-only fingerprints by text, the recently used ones (at most 8 M characters); a hit costs a string hash and compare instead of a SHA-256. */
const memo = new GenerationalCache<string, string>(8 * 1024 * 1024, (content) => content.length);
const MEMO_MAX_CHARS = 16 * 1024;
/** The keys of tool-call turns, by keyInputsOf, the recently used ones (at most 8 M characters of inputs). */
const callTurnMemo = new GenerationalCache<string, TurnKeys>(8 * 1024 * 1024, (inputs) => inputs.length);

function computeFingerprint(content: ChatMessage["content"], toolCalls: readonly ToolCall[] | undefined): string {
  const calls = (toolCalls ?? []).map((call) => [call.id ?? "", call.function?.name ?? "", canonicalArguments(call.function?.arguments)]);
  if (calls.length > 1) calls.sort(byId);
  // one-shot hash: no Hash object per message (a 20-turn history hashes 20 of them per request)
  return hash("sha256", JSON.stringify([normalisedText(content), calls]), "base64url").slice(0, 32);
}

/** Python's `str.strip` set and JS `trim`'s together (Open WebUI strips in Python, other frontends in JS). */
const WHITESPACE_RUN = /[\s\x1c-\x1f\x85]+/g;

/** What a frontend displays as the answer, compared across frontends' rewrites. */
export function normalisedText(content: ChatMessage["content"]): string {
  return withoutReasoningBlocks(textOf(content)).replace(WHITESPACE_RUN, " ").trim();
}

function byId(a: readonly string[], b: readonly string[]): number {
  return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0;
}

/** Parsed and re-serialised with sorted keys (`""` and blank are `{}`, as clients send them); arguments that are not JSON compare as trimmed text. */
function canonicalArguments(argumentsText: string | undefined): string {
  if (argumentsText === undefined || argumentsText.trim() === "") return "{}";
  try {
    return canonicalJson(JSON.parse(argumentsText));
  } catch {
    return argumentsText.trim();
  }
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

import { hash } from "node:crypto";
import type { ChatMessage, ToolCall } from "../plugins/contract.js";
import { GenerationalCache } from "../util/generational-cache.js";

/**
 * The fingerprint of an assistant message: what stateless clients keep of a
 * turn — its visible text and its tool calls — normalised (SPEC §12.6).
 * Content null, absent and "" are the same; trailing whitespace is ignored;
 * tool-call arguments compare as canonical JSON; tool-call ids count.
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

/** Text-only fingerprints by text, the recently used ones (at most 8 M characters); a hit costs a string hash and compare instead of a SHA-256. */
const memo = new GenerationalCache<string, string>(8 * 1024 * 1024, (content) => content.length);
const MEMO_MAX_CHARS = 16 * 1024;

function computeFingerprint(content: ChatMessage["content"], toolCalls: readonly ToolCall[] | undefined): string {
  const calls = (toolCalls ?? []).map((call) => [call.id ?? "", call.function?.name ?? "", canonicalArguments(call.function?.arguments)]);
  // one-shot hash: no Hash object per message (a 20-turn history hashes 20 of them per request)
  return hash("sha256", JSON.stringify([visibleText(content).trimEnd(), calls]), "base64url").slice(0, 32);
}

export function fingerprintMessage(message: ChatMessage): string {
  return fingerprintOf(message.content, message.tool_calls);
}

/** A content-part array counts by its text parts, which is what a client displays. */
function visibleText(content: ChatMessage["content"]): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((part) => (typeof part.text === "string" ? part.text : "")).join("");
}

/** Parsed and re-serialised with sorted keys; arguments that are not JSON compare as trimmed text. */
function canonicalArguments(argumentsText: string | undefined): string {
  if (argumentsText === undefined || argumentsText.trim() === "") return "";
  try {
    return canonicalJson(JSON.parse(argumentsText));
  } catch {
    return argumentsText.trim();
  }
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.keys(value as object)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

import type { JsonObject, Usage } from "../../providers/contract.js";

/** The canonical finish reason (OpenAI's) as Anthropic's `stop_reason`. */
const STOP_REASONS: Readonly<Record<string, string>> = {
  stop: "end_turn",
  length: "max_tokens",
  tool_calls: "tool_use",
  function_call: "tool_use",
  content_filter: "refusal",
};

/**
 * `stop_reason` and `stop_sequence`. OpenAI-style upstreams answer "stop"
 * both when the answer ended and when a stop sequence cut it, without naming
 * the sequence: such an answer is `end_turn`. `stop_sequence` is reported
 * only when the upstream names the sequence that matched.
 */
export function stopReasonOf(finishReason: string | undefined, matchedSequence?: string): { stop_reason: string; stop_sequence: string | null } {
  if (matchedSequence !== undefined) return { stop_reason: "stop_sequence", stop_sequence: matchedSequence };
  return { stop_reason: STOP_REASONS[finishReason ?? "stop"] ?? "end_turn", stop_sequence: null };
}

/**
 * Canonical usage as Anthropic counts it: `input_tokens` without the cached
 * prompt tokens, which are `cache_read_input_tokens` (OpenAI's
 * `prompt_tokens_details.cached_tokens`, DeepSeek's `prompt_cache_hit_tokens`),
 * and those written to the cache, `cache_creation_input_tokens`
 * (`prompt_tokens_details.cache_write_tokens`, as OpenRouter says it).
 */
export function anthropicUsage(usage: Usage | undefined): JsonObject {
  if (!usage) return { input_tokens: 0, output_tokens: 0 };
  const details = usage.prompt_tokens_details as { cached_tokens?: unknown; cache_write_tokens?: unknown } | undefined;
  const cachedValue = details?.cached_tokens ?? usage.prompt_cache_hit_tokens;
  const cached = typeof cachedValue === "number" && cachedValue > 0 ? Math.min(cachedValue, usage.prompt_tokens) : 0;
  const writtenValue = details?.cache_write_tokens;
  const written = typeof writtenValue === "number" && writtenValue > 0 ? Math.min(writtenValue, usage.prompt_tokens - cached) : 0;
  return {
    input_tokens: usage.prompt_tokens - cached - written,
    output_tokens: usage.completion_tokens,
    cache_creation_input_tokens: written,
    cache_read_input_tokens: cached,
  };
}

/** Who the message is: its id, the model name the client asked for. */
export interface MessageIdentity {
  readonly id: string;
  readonly model: string;
}

/** A whole `message` object: the non-streaming answer, and (empty, usage zero) the one `message_start` opens a stream with. */
export function messageObject(
  identity: MessageIdentity,
  content: JsonObject[],
  stop: ReturnType<typeof stopReasonOf> | undefined,
  usage: JsonObject,
): JsonObject {
  return {
    id: identity.id,
    type: "message",
    role: "assistant",
    model: identity.model,
    content,
    stop_reason: stop?.stop_reason ?? null,
    stop_sequence: stop?.stop_sequence ?? null,
    usage,
  };
}

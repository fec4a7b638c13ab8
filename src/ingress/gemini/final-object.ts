import type { JsonObject, Usage } from "../../providers/contract.js";

/** The canonical finish reason (OpenAI's) as Gemini's `finishReason`; a turn that ends in function calls is STOP, as Gemini says it. */
const FINISH_REASONS: Readonly<Record<string, string>> = {
  stop: "STOP",
  tool_calls: "STOP",
  function_call: "STOP",
  length: "MAX_TOKENS",
  content_filter: "SAFETY",
};

export function finishReasonOf(finishReason: string | undefined): string {
  return FINISH_REASONS[finishReason ?? "stop"] ?? "OTHER";
}

/**
 * Canonical usage as Gemini's `usageMetadata`: the reasoning tokens are
 * `thoughtsTokenCount`, apart from `candidatesTokenCount` as Gemini counts
 * them; cached prompt tokens are `cachedContentTokenCount`.
 */
export function usageMetadata(usage: Usage | undefined): JsonObject {
  if (!usage) return { promptTokenCount: 0, candidatesTokenCount: 0, totalTokenCount: 0 };
  const thoughts = usage.completion_tokens_details?.reasoning_tokens ?? 0;
  const details = usage.prompt_tokens_details as { cached_tokens?: unknown } | undefined;
  const cachedValue = details?.cached_tokens ?? usage.prompt_cache_hit_tokens;
  const metadata: JsonObject = {
    promptTokenCount: usage.prompt_tokens,
    candidatesTokenCount: Math.max(0, usage.completion_tokens - thoughts),
    totalTokenCount: usage.total_tokens || usage.prompt_tokens + usage.completion_tokens,
  };
  if (thoughts > 0) metadata.thoughtsTokenCount = thoughts;
  if (typeof cachedValue === "number" && cachedValue > 0) metadata.cachedContentTokenCount = Math.min(cachedValue, usage.prompt_tokens);
  return metadata;
}

/** Who the response is: its id (the turn's), the model name the client asked for. */
export interface ResponseIdentity {
  readonly responseId: string;
  readonly modelVersion: string;
}

/**
 * A GenerateContentResponse: the whole answer, or one chunk of a stream
 * (its parts so far; the last one with finishReason and usage).
 */
export function responseObject(identity: ResponseIdentity, parts: JsonObject[], finish?: { reason: string; usage: JsonObject }): JsonObject {
  const candidate: JsonObject = { content: { role: "model", parts }, index: 0 };
  if (finish) candidate.finishReason = finish.reason;
  const response: JsonObject = { candidates: [candidate] };
  if (finish) response.usageMetadata = finish.usage;
  response.modelVersion = identity.modelVersion;
  response.responseId = identity.responseId;
  return response;
}

import type { Json, JsonObject, Usage } from "../plugins/contract.js";
import type { ResponsesRequest } from "./request.js";

/** What every envelope of one response repeats. */
export interface ResponseIdentity {
  readonly id: string;
  readonly createdAt: number;
  /** The model name the client asked for. */
  readonly model: string;
  readonly request: ResponsesRequest;
  readonly conversationId: string | null;
}

export type ResponseStatus = "in_progress" | "completed" | "incomplete" | "failed";

export interface ResponseOutcome {
  readonly status: ResponseStatus;
  readonly output: JsonObject[];
  readonly usage?: Usage | undefined;
  readonly error?: { code: string; message: string } | undefined;
  /** Why an incomplete response stopped (`max_output_tokens`, `content_filter`). */
  readonly incompleteReason?: string | undefined;
}

/** The Response object as OpenAI's API returns it, so SDK types and accumulators accept it as is. */
export function responseObject(identity: ResponseIdentity, outcome: ResponseOutcome): JsonObject {
  const request = identity.request;
  const body: JsonObject = {
    id: identity.id,
    object: "response",
    created_at: identity.createdAt,
    status: outcome.status,
    background: false,
    error: outcome.error ?? null,
    incomplete_details: outcome.incompleteReason ? { reason: outcome.incompleteReason } : null,
    instructions: request.instructions ?? null,
    max_output_tokens: request.max_output_tokens ?? null,
    max_tool_calls: null,
    model: identity.model,
    output: outcome.output,
    parallel_tool_calls: request.parallel_tool_calls ?? true,
    previous_response_id: request.previous_response_id ?? null,
    prompt_cache_key: null,
    prompt_cache_retention: null,
    reasoning: { effort: request.reasoning?.effort ?? null, summary: request.reasoning?.summary ?? null },
    safety_identifier: null,
    service_tier: "default",
    store: request.store !== false,
    temperature: request.temperature ?? null,
    text: (request.text as Json | undefined) ?? { format: { type: "text" } },
    tool_choice: (request.tool_choice as Json | undefined) ?? "auto",
    tools: (request.tools as Json[] | undefined) ?? [],
    top_logprobs: 0,
    top_p: request.top_p ?? null,
    truncation: "disabled",
    usage: outcome.usage ? responsesUsage(outcome.usage) : null,
    user: request.user ?? null,
    metadata: request.metadata ?? {},
  };
  if (identity.conversationId) body.conversation = { id: identity.conversationId };
  return body;
}

/** Chat usage → Responses usage (`input_tokens` / `output_tokens`, reasoning tokens in the details). */
function responsesUsage(usage: Usage): JsonObject {
  const cached = (usage.prompt_tokens_details as { cached_tokens?: number } | undefined)?.cached_tokens ?? 0;
  return {
    input_tokens: usage.prompt_tokens ?? 0,
    input_tokens_details: { cached_tokens: cached },
    output_tokens: usage.completion_tokens ?? 0,
    output_tokens_details: { reasoning_tokens: usage.completion_tokens_details?.reasoning_tokens ?? 0 },
    total_tokens: usage.total_tokens ?? (usage.prompt_tokens ?? 0) + (usage.completion_tokens ?? 0),
  };
}

/** Chat finish reasons that make a response `incomplete`, with OpenAI's reason for each. */
export function incompleteReasonOf(finishReason: string | undefined): string | undefined {
  if (finishReason === "length") return "max_output_tokens";
  if (finishReason === "content_filter") return "content_filter";
  return undefined;
}

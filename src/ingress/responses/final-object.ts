import type { JsonObject, Usage } from "../../providers/contract.js";
import { isJsonObject, readString } from "../../providers/json-readers.js";
import type { ResponsesRequest } from "./request.js";

/** What every envelope of one response repeats. */
export interface ResponseIdentity {
  readonly id: string;
  readonly createdAt: number;
  /** The model name the client asked for. */
  readonly model: string;
  readonly request: ResponsesRequest;
  readonly conversationId: string | null;
  /** Hosted tool types left out of the upstream request: the model never had them, so they are not echoed. */
  readonly toolsOmitted?: readonly string[];
}

export type ResponseStatus = "in_progress" | "completed" | "incomplete" | "failed";

export interface ResponseOutcome {
  readonly status: ResponseStatus;
  readonly output: JsonObject[];
  readonly usage?: Usage | undefined;
  readonly error?: { code: string; message: string } | undefined;
  /** When it completed (Unix seconds); now when unset. */
  readonly completedAt?: number | undefined;
  /** Why an incomplete response stopped (`max_output_tokens`, `content_filter`). */
  readonly incompleteReason?: string | undefined;
  /** The tier the upstream says served the answer (its `service_tier`), when it says. */
  readonly serviceTier?: string | undefined;
}

/**
 * The Response object as the Open Responses specification (and OpenAI's API)
 * spells it: every field the spec requires, and echoed settings as the
 * request asked or as their effective default, never `null` where the spec
 * wants a value (docs/api.md#open-responses). `completed_at` is set only once the response
 * completed.
 */
export function responseObject(identity: ResponseIdentity, outcome: ResponseOutcome): JsonObject {
  const request = identity.request;
  const body: JsonObject = {
    id: identity.id,
    object: "response",
    created_at: identity.createdAt,
    completed_at: outcome.status === "completed" ? (outcome.completedAt ?? Math.floor(Date.now() / 1000)) : null,
    status: outcome.status,
    background: false,
    error: outcome.error ?? null,
    incomplete_details: outcome.incompleteReason ? { reason: outcome.incompleteReason } : null,
    instructions: request.instructions ?? null,
    max_output_tokens: request.max_output_tokens ?? null,
    // carrierd does not cap tool calls itself: there is no limit in force to echo
    max_tool_calls: null,
    model: identity.model,
    output: outcome.output,
    parallel_tool_calls: request.parallel_tool_calls ?? true,
    previous_response_id: request.previous_response_id ?? null,
    prompt_cache_key: typeof request.prompt_cache_key === "string" ? request.prompt_cache_key : null,
    prompt_cache_retention: null,
    reasoning: { effort: request.reasoning?.effort ?? null, summary: request.reasoning?.summary ?? null },
    safety_identifier: typeof request.safety_identifier === "string" ? request.safety_identifier : null,
    service_tier: outcome.serviceTier ?? "default",
    store: request.store !== false,
    // OpenAI's defaults, which chat upstreams share: what sampled the answer when the request set nothing
    temperature: request.temperature ?? 1,
    top_p: request.top_p ?? 1,
    presence_penalty: request.presence_penalty ?? 0,
    frequency_penalty: request.frequency_penalty ?? 0,
    text: textSettings(request.text),
    tool_choice: request.tool_choice ?? "auto",
    tools: echoedTools(request.tools, identity.toolsOmitted ?? []),
    top_logprobs: 0,
    truncation: request.truncation === "auto" ? "auto" : "disabled",
    usage: outcome.usage ? responsesUsage(outcome.usage) : null,
    user: request.user ?? null,
    metadata: request.metadata ?? {},
  };
  if (identity.conversationId) body.conversation = { id: identity.conversationId };
  return body;
}

/**
 * The tools the model had, as the spec echoes them: function tools, a
 * namespace's functions each as a function tool with its `namespace` (as its
 * calls are spelled), and a hosted tool the upstream ran as the client sent
 * it (the spec describes function tools only); left-out hosted tools not.
 */
function echoedTools(tools: JsonObject[] | undefined, omitted: readonly string[]): JsonObject[] {
  const echoed: JsonObject[] = [];
  for (const tool of tools ?? []) {
    if (tool.type === "function") echoed.push(echoedTool(tool));
    else if (tool.type === "namespace" && Array.isArray(tool.tools))
      for (const member of tool.tools.filter(isJsonObject)) echoed.push({ ...echoedTool(member), namespace: tool.name ?? null });
    else if (!omitted.includes(readString(tool.type) ?? "")) echoed.push(tool);
  }
  return echoed;
}

/** A function tool as the spec echoes it: every field present, `null` for what the request left unset (carrierd then sends the upstream no `strict`). */
function echoedTool(tool: JsonObject): JsonObject {
  return {
    type: "function",
    name: tool.name ?? "",
    description: typeof tool.description === "string" ? tool.description : null,
    parameters: tool.parameters && typeof tool.parameters === "object" ? tool.parameters : null,
    strict: typeof tool.strict === "boolean" ? tool.strict : null,
  };
}

/** `text` always names its format (plain text unless the request asked for JSON). */
function textSettings(text: ResponsesRequest["text"]): JsonObject {
  const settings: JsonObject = { format: text?.format ?? { type: "text" } };
  if (typeof text?.verbosity === "string") settings.verbosity = text.verbosity;
  return settings;
}

/** Chat usage → Responses usage (`input_tokens` / `output_tokens`, reasoning tokens in the details). */
function responsesUsage(usage: Usage): JsonObject {
  // DeepSeek counts the cached prompt tokens under its own name
  const cached = usage.prompt_tokens_details?.cached_tokens ?? (typeof usage.prompt_cache_hit_tokens === "number" ? usage.prompt_cache_hit_tokens : 0);
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

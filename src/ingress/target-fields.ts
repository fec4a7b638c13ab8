import type { ChatRequest, WireApi } from "../providers/contract.js";

/** What a door reads for itself: never a field of the upstream's request, so never said to be dropped. */
const DOOR_OWN: readonly string[] = ["model", "messages", "stream", "stream_options", "model_options"];

/**
 * The chat request's top-level fields each translated target takes, under
 * its own name or mapped (docs/api.md#across-wires): its plugin's codec
 * sends these and no other. `thinking`, `top_k`, `safetySettings` and the
 * like are the target's own names, which a route's `params` and
 * `request_extra` set and a client may send too. A target not listed
 * (an OpenAI-style chat upstream) is sent every field.
 */
const TAKEN: Partial<Record<WireApi, ReadonlySet<string>>> = {
  "anthropic-messages": new Set([
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "stop",
    "temperature",
    "top_p",
    "max_tokens",
    "max_completion_tokens",
    "user",
    "safety_identifier",
    "service_tier",
    "reasoning_effort",
    "anthropic_beta",
    "thinking",
    "top_k",
    "output_config",
    "context_management",
    "container",
    "mcp_servers",
    "inference_geo",
  ]),
  gemini: new Set([
    "tools",
    "tool_choice",
    "stop",
    "temperature",
    "top_p",
    "seed",
    "presence_penalty",
    "frequency_penalty",
    "max_tokens",
    "max_completion_tokens",
    "response_format",
    "reasoning_effort",
    "logprobs",
    "top_logprobs",
    "generationConfig",
    "toolConfig",
    "safetySettings",
    "cachedContent",
    "labels",
  ]),
};

/**
 * The fields of a chat request (a chat client's, or the one a door
 * translated its own into) that the route's target has no such thing for,
 * to be said once per route and field (DroppedFields).
 */
export function droppedOnTarget(request: ChatRequest, target: WireApi | undefined): string[] {
  const taken = target === undefined ? undefined : TAKEN[target];
  if (!taken) return [];
  return Object.keys(request).filter((key) => request[key] !== undefined && request[key] !== null && !taken.has(key) && !DOOR_OWN.includes(key));
}

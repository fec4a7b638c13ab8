import type { CarrierPolicy, ChatMessage, ChatRequest } from "../providers/contract.js";
import type { ResolvedModel } from "../routing/routes/route-table.js";
import { deepMerge, mergeDefaults } from "../foundation/util/deep-merge.js";

/** carrierd's own request keys: they never go upstream. */
const GATEWAY_KEYS = new Set(["model_options"]);

/**
 * The canonical upstream body: the client's request with the upstream model
 * name, the shaped messages, `models[].params` as defaults the client's
 * values override (docs/routes.md#models), then the route's `request_extra` on top.
 * Upstream stream mode mirrors the client's.
 */
export function buildUpstreamBody(request: ChatRequest, messages: ChatMessage[], resolved: ResolvedModel, policy: CarrierPolicy, stream: boolean): ChatRequest {
  const body: ChatRequest = { model: resolved.upstreamModel, messages };
  for (const [key, value] of Object.entries(request)) {
    if (key === "model" || key === "messages" || GATEWAY_KEYS.has(key) || value === undefined) continue;
    body[key] = value;
  }
  body.stream = stream;
  if (!stream) delete body.stream_options;
  return deepMerge(mergeDefaults(body, resolved.params), policy.requestExtra);
}

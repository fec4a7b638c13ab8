import { replayOptOut } from "../carriers/replay-opt-out.js";
import { UpstreamRequestBuilder } from "../chat/upstream-request.js";
import type { ChatRequest } from "../plugins/contract.js";
import type { PluginRegistry } from "../plugins/plugin-registry.js";
import type { ResolvedModel, RouteTable } from "../routes/route-table.js";
import { findSession, type SessionMatch } from "../sessions/session-finder.js";
import type { SessionStore } from "../store/session-store.js";
import { Cancellation } from "../upstream/cancellation.js";
import { rejectedFor } from "../verdicts/record-rejection.js";
import type { VerdictStore } from "../verdicts/verdict-store.js";
import { priceRequest, type PricedRequest } from "./price.js";

/** What estimating needs, all of it what ChatService itself uses. */
export interface WireContext {
  readonly table: RouteTable;
  readonly registry: PluginRegistry;
  readonly store: SessionStore;
  readonly verdicts: VerdictStore;
  readonly keyHash: string;
  readonly env: Readonly<Record<string, string | undefined>>;
}

export interface WireEstimate extends PricedRequest {
  /** Which stored turn each request message is (by request index), as replay will see it. */
  readonly match: SessionMatch;
}

/**
 * Prices a request as it will go upstream: the same session match, the
 * same effective fields (route fields minus verdicts minus opt-out) and the
 * same request builder ChatService uses, so every carrier that replay will
 * attach — reasoning text under each plain field, verbatim
 * `reasoning_details`, native records — is in the price, and nothing replay
 * would strip is.
 */
export function estimateWire(context: WireContext, request: ChatRequest, resolved: ResolvedModel, sessionId: string): WireEstimate {
  const policy = context.table.policyFor(resolved.provider, resolved.upstreamModel);
  const match = findSession(context.store, context.keyHash, request.messages, sessionId);
  const key = { provider: resolved.provider.id, host: resolved.provider.host, model: resolved.upstreamModel };
  const rejected = rejectedFor(context.verdicts, context.store, key, match.sessionId);
  const optOut = replayOptOut(request);
  const effective = policy.fields.filter((field) => !rejected.includes(field) && !optOut.includes(field));
  const builder = new UpstreamRequestBuilder(context.store, context.registry, request, resolved, policy, match, { stream: request.stream === true, cancellation: new Cancellation() }, context.env);
  return { ...priceRequest(builder.build(effective).call.body), match };
}

import { planTurn, type PlanningContext } from "../plan-turn.js";
import type { ChatRequest } from "../../providers/contract.js";
import type { ResolvedModel, RouteTable } from "../../routing/routes/route-table.js";
import type { SessionMatch } from "../sessions/session-finder.js";
import { Cancellation } from "../../providers/upstream/cancellation.js";
import { priceRequest, type PricedRequest } from "./price.js";

/** What estimating needs: what the chat service plans a turn with, and the route table the request is priced under. */
export interface WireContext extends PlanningContext {
  readonly table: RouteTable;
  /** The request's key scope: the estimate matches the session its turn will. */
  readonly keyHash: string;
}

export interface WireEstimate extends PricedRequest {
  /** Which stored turn each request message is (by request index), as replay will see it. */
  readonly match: SessionMatch;
}

/**
 * Prices a request as it will go upstream: planned by the same planTurn as
 * the chat service (the same session match, the same effective fields:
 * route fields minus verdicts minus opt-out, the same request builder), so
 * every carrier that replay will attach — reasoning text under each plain
 * field, verbatim `reasoning_details`, native records — is in the price,
 * and nothing replay would strip is.
 */
export async function estimateWire(context: WireContext, request: ChatRequest, resolved: ResolvedModel, sessionId: string): Promise<WireEstimate> {
  const policy = context.table.policyFor(resolved.provider, resolved.upstreamModel);
  const plan = await planTurn(
    context,
    request,
    { resolved, policy },
    // the session is named, so no new id is drawn and no scope is needed for one
    { keyHash: context.keyHash, explicit: sessionId, sessionScope: undefined, stream: request.stream === true, cancellation: new Cancellation() },
  );
  return { ...priceRequest(plan.takeFirst().call.body), match: plan.match };
}

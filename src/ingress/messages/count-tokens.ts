import { planTurn, type PlanningContext } from "../../turn/plan-turn.js";
import { priceRequest } from "../../turn/compaction/price.js";
import { GatewayError } from "../../foundation/errors/gateway-error.js";
import type { ChatRequest } from "../../providers/contract.js";
import type { ResolvedModel, RouteTable } from "../../routing/routes/route-table.js";
import type { ReplaySource } from "../../storage/turns.js";
import { Cancellation } from "../../providers/upstream/cancellation.js";

/** How long an Anthropic route's count_tokens may take before the estimate is given instead. */
const UPSTREAM_COUNT_TIMEOUT_MS = 30_000;

/**
 * carrierd's own count for a route that is not Anthropic's: the request as
 * it would go upstream — planned by the same planTurn as a turn (the same
 * session match, every carrier replay would attach) — priced by
 * compaction's one pricing function (a token per four UTF-8 bytes). An
 * estimate, as each upstream tokenises its own way.
 */
export async function estimateInputTokens(
  context: PlanningContext & { readonly table: RouteTable },
  request: ChatRequest,
  resolved: ResolvedModel,
  scope: { keyHash: string; explicit: string | undefined; sessionScope: string | undefined; sealed: ReadonlyMap<number, ReplaySource> | undefined },
): Promise<number> {
  const policy = context.table.policyFor(resolved.provider, resolved.upstreamModel);
  const plan = await planTurn(
    context,
    request,
    { resolved, policy },
    {
      keyHash: scope.keyHash,
      explicit: scope.explicit,
      sessionScope: scope.sessionScope,
      stream: false,
      cancellation: new Cancellation(),
      sealed: scope.sealed,
    },
  );
  return priceRequest(plan.takeFirst().call.body).total;
}

/**
 * An Anthropic route's own count (`POST /v1/messages/count_tokens` on the
 * provider's base URL, Anthropic or Microsoft Foundry): the client's body
 * with the upstream model name, its `anthropic-beta` passed on. The
 * upstream's answer, success or error, is returned as it came.
 */
export async function upstreamCount(
  resolved: ResolvedModel,
  body: Record<string, unknown>,
  apiKey: string | undefined,
  beta: string | undefined,
): Promise<{ status: number; body: string }> {
  const base = (resolved.provider.baseUrl ?? "https://api.anthropic.com").replace(/\/+$/, "");
  const headers: Record<string, string> = { "content-type": "application/json", "anthropic-version": "2023-06-01" };
  if (apiKey) headers["x-api-key"] = apiKey;
  if (beta) headers["anthropic-beta"] = beta;
  try {
    const answer = await fetch(`${base}/v1/messages/count_tokens`, {
      method: "POST",
      headers: { ...headers, ...resolved.provider.headers },
      body: JSON.stringify({ ...body, model: resolved.upstreamModel }),
      signal: AbortSignal.timeout(UPSTREAM_COUNT_TIMEOUT_MS),
    });
    return { status: answer.status, body: await answer.text() };
  } catch (error) {
    throw new GatewayError("upstream_unreachable", `count_tokens: the upstream did not answer: ${(error as Error).message}`, null, { cause: error });
  }
}

/** Vertex AI counts tokens at another endpoint of its own; carrierd estimates there instead. */
export function countsUpstream(resolved: ResolvedModel): boolean {
  const host = resolved.provider.host;
  return resolved.provider.plugin === "anthropic" && !(host === "aiplatform.googleapis.com" || host.endsWith("-aiplatform.googleapis.com"));
}

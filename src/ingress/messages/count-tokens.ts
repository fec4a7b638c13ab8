import { planTurn, type PlanningContext } from "../../turn/plan-turn.js";
import { priceRequest } from "../../turn/compaction/price.js";
import { GatewayError } from "../../foundation/errors/gateway-error.js";
import type { ChatRequest } from "../../providers/contract.js";
import type { ResolvedModel, RouteTable } from "../../routing/routes/route-table.js";
import type { ReplaySource } from "../../storage/turns.js";
import { Cancellation } from "../../providers/upstream/cancellation.js";
import { openCarriedBody, spliceTopLevel } from "../../providers/carried/carried-top.js";

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
 * provider's base URL, Anthropic or Microsoft Foundry), carried: the
 * client's bytes with the upstream model name spliced in, its `anthropic-*`
 * headers as it sent them (its betas joined with routes.yaml's), carrierd's
 * credential. The upstream's answer, success or error, is returned as it came.
 */
export async function upstreamCount(
  resolved: ResolvedModel,
  bytes: Buffer,
  apiKey: string | undefined,
  clientHeaders: Readonly<Record<string, string>>,
): Promise<{ status: number; body: string }> {
  const base = (resolved.provider.baseUrl ?? "https://api.anthropic.com").replace(/\/+$/, "");
  const headers: Record<string, string> = { "content-type": "application/json", "anthropic-version": "2023-06-01", ...clientHeaders };
  if (apiKey) headers["x-api-key"] = apiKey;
  for (const [name, value] of Object.entries(resolved.provider.headers)) {
    const lower = name.toLowerCase();
    headers[lower] = lower === "anthropic-beta" && headers[lower] ? `${value},${headers[lower]}` : value;
  }
  const body = openCarriedBody(bytes);
  spliceTopLevel(body, resolved.upstreamModel, undefined);
  try {
    const answer = await fetch(`${base}/v1/messages/count_tokens`, {
      method: "POST",
      headers,
      body: body.splices.apply(),
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

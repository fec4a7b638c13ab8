import type { EventBus } from "../foundation/event-bus/event-bus.js";
import type { Logger } from "../foundation/logging/logger.js";
import type { CarrierField, CarrierPolicy, ProviderPlugin, UpstreamResult } from "../providers/contract.js";
import type { Storage } from "../storage/storage.js";
import { recordRejection } from "../routing/verdicts/record-rejection.js";
import { fieldsToReject } from "../routing/verdicts/unknown-field.js";
import type { TurnPlan } from "./plan-turn.js";
import type { SentReplay } from "./upstream-request.js";
import { traceUpstreamAttempt } from "../foundation/tracing/trace-hooks.js";
import { cancellationOf } from "../providers/upstream/cancellation.js";

/** What a rejected call's verdict is recorded with. */
export interface RetryContext {
  readonly storage: Storage;
  readonly bus: EventBus;
  readonly log: Logger;
}

/** The turn being called: its plan, and what a verdict about it names. */
export interface CallTarget {
  readonly plan: TurnPlan;
  readonly plugin: ProviderPlugin;
  readonly policy: CarrierPolicy;
  readonly clientModel: string;
  /** The data scope of the request's key, which a new session is filed under. */
  readonly keyHash: string;
}

/** The upstream's answer, the fields the answered call carried, and when that call was sent. */
export interface CallOutcome {
  readonly result: UpstreamResult;
  readonly effective: CarrierField[];
  readonly sentAt: number;
  /** What the answered call's messages carried (TurnAudit). */
  readonly sent: SentReplay;
  /** Fields the upstream rejected on this turn: the answer is the retry's without them (empty: the first call's). */
  readonly rejectedNow: readonly CarrierField[];
}

/**
 * Sends the planned call; when the upstream rejects it for fields it does
 * not know (the plugin classifies the error), retries exactly once without
 * them and, once the upstream served that retry, records the verdict (docs/sessions-and-replay.md#unknown-field-fallback-verdicts). The call is built at most
 * twice: the plan's first call, and the retry (TurnPlan.rebuild). What the
 * first call carried is kept, a few field names, so the classifier needs no
 * second build. A rejection that names no carrier
 * field is returned as it is.
 */
export async function callWithRetry(context: RetryContext, target: CallTarget): Promise<CallOutcome> {
  const { plan, plugin, policy } = target;
  let effective = plan.effective;
  let sentAt = performance.now();
  const { carried, sent, answer } = sendFirst(plugin, plan);
  let result = await answer;
  if (result.ok) return { result, effective, sentAt, sent, rejectedNow: NONE };
  const named = plugin.classifyError?.(result.status, result.body, carried);
  const newlyRejected = fieldsToReject(named, carried, policy.mustEcho, plan.rejected);
  if (newlyRejected.length === 0) return { result, effective, sentAt, sent, rejectedNow: NONE };
  const { key, sessionId } = plan;
  const rejection = {
    ...key,
    sessionId,
    keyHash: target.keyHash,
    fields: newlyRejected,
    status: result.status,
    body: result.body,
    clientModel: target.clientModel,
  };
  effective = effective.filter((field) => !newlyRejected.includes(field));
  const retry = await plan.rebuild(effective);
  context.log.debug(
    { session_id: sessionId, provider: key.provider, model: key.model, effective, attached: retry.attached },
    "carriers attached (retry without rejected fields)",
  );
  sentAt = performance.now();
  traceUpstreamAttempt(cancellationOf(retry.call), key, { refusedStatus: result.status, dropped: newlyRejected });
  result = await plugin.invoke(retry.call);
  // Recorded only once the upstream served the retry: a model name it never serves (a glob route takes any name) leaves
  // no verdict, so one key cannot grow the table with made-up names (docs/sessions-and-replay.md#unknown-field-fallback-verdicts).
  if (result.ok) await recordServed(context, rejection);
  else
    context.log.info(
      { session_id: sessionId, provider: key.provider, model: key.model, status: result.status },
      "no verdict: the retry without the rejected fields was not served",
    );
  return { result, effective, sentAt, sent: retry.replayShape(), rejectedNow: newlyRejected };
}

/** A verdict that cannot be written is logged; the answer the upstream is already sending still reaches the client. */
async function recordServed(context: RetryContext, rejection: Parameters<typeof recordRejection>[1]): Promise<void> {
  try {
    await recordRejection({ storage: context.storage, bus: context.bus, log: context.log }, rejection);
  } catch (error) {
    context.log.error({ err: error, provider: rejection.provider, model: rejection.model, fields: rejection.fields }, "verdict could not be recorded");
  }
}

const NONE: readonly CarrierField[] = [];

/**
 * Sends the plan's first call, keeping what it carried (a few field names,
 * what a rejection is classified by). Its own frame: the awaiting caller
 * must not hold the call's body, the whole history, while the upstream
 * answers (docs/performance.md#what-a-waiting-turn-holds).
 */
function sendFirst(plugin: ProviderPlugin, plan: TurnPlan): { carried: CarrierField[]; sent: SentReplay; answer: Promise<UpstreamResult> } {
  const first = plan.takeFirst();
  traceUpstreamAttempt(cancellationOf(first.call), plan.key);
  return { carried: first.sent, sent: first.replayShape(), answer: plugin.invoke(first.call) };
}

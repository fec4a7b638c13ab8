import type { CarrierField, CarrierPolicy } from "../providers/contract.js";
import type { LeftOutBy, MatchKey, ReplayDecision, TurnTimings } from "../storage/session-history.js";
import type { ReplaySource } from "../storage/turns.js";
import type { CallOutcome } from "./call-with-retry.js";
import type { TurnPlan } from "./plan-turn.js";
import type { SessionMatch } from "./sessions/session-finder.js";

/**
 * Which stored turn each assistant message of the request is, and by which
 * key; a message whose carriers came sealed is the envelope's turn, whatever
 * the store matched.
 */
export function matchedMessages(match: SessionMatch, sealed: ReadonlyMap<number, ReplaySource> | undefined): ReplayDecision["matched"] {
  const matched: [number, string, MatchKey][] = [];
  // turnIds holds the messages in order
  for (const [message, turnId] of match.turnIds) if (!sealed?.has(message)) matched.push([message, turnId, match.matchedBy.get(message) ?? "fingerprint"]);
  if (!sealed) return matched;
  for (const [message, source] of sealed) matched.push([message, source.id, "envelope"]);
  return matched.sort((a, b) => a[0] - b[0]);
}

/** What replay sent with the answered call, and why each route field that did not go was left out. */
export function replayDecision(plan: TurnPlan, policy: CarrierPolicy, matched: ReplayDecision["matched"], outcome: CallOutcome): ReplayDecision {
  const matchedTurn = new Map(matched.map(([message, turnId]) => [message, turnId]));
  return {
    effective: outcome.effective,
    matched,
    attached: outcome.sent.attached.map((entry) =>
      matchedTurn.get(entry.index) === entry.turn ? [entry.index, entry.fields] : [entry.index, entry.fields, entry.turn ?? null],
    ),
    placeholders: outcome.sent.placeholders,
    left_out: policy.fields.filter((field) => !outcome.effective.includes(field)).map((field) => [field, whyLeftOut(field, plan, outcome)]),
    retried: outcome.rejectedNow.length > 0,
  };
}

function whyLeftOut(field: CarrierField, plan: TurnPlan, outcome: CallOutcome): LeftOutBy {
  if (outcome.rejectedNow.includes(field)) return "rejected";
  return plan.rejected.includes(field) ? "verdict" : "opt_out";
}

/**
 * A turn's clock, from the moment its answered call went upstream: a few
 * numbers set as the answer streams, read once when the turn is stored.
 */
export class TurnClock {
  firstReasoning: number | null = null;
  firstContent: number | null = null;

  constructor(
    readonly sentAt: number,
    readonly upstreamMs: number,
  ) {}

  sinceSent(): number {
    return performance.now() - this.sentAt;
  }

  timings(): TurnTimings {
    return {
      upstream_ms: round(this.upstreamMs),
      first_reasoning_ms: roundOrNull(this.firstReasoning),
      first_content_ms: roundOrNull(this.firstContent),
      total_ms: round(this.sinceSent()),
    };
  }
}

/** Tenths of a millisecond: finer says nothing about a network call. */
function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}

function roundOrNull(ms: number | null): number | null {
  return ms === null ? null : round(ms);
}

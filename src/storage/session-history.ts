/*
 * What the gateway records of each turn for session history
 * (docs/api.md#session-history): its route, timings and replay decision,
 * stored with the turn and shown by SessionStorage.show.
 */

/**
 * What the gateway decided and measured for one turn, stored with it
 * (NewTurn.audit): its route, its timings, and what replay sent upstream.
 * Names and numbers only, never a carrier's bytes.
 */
export interface TurnAudit {
  /** The carrier route in force, numbered from 1 in routes.yaml order; 0: none matched (routeNumber). */
  readonly route: number;
  /** That route's `match` as routes.yaml wrote it; null: default carriers. Absent on turns stored before it was recorded. */
  readonly route_match?: Readonly<Record<string, unknown>> | null;
  readonly timings: TurnTimings;
  readonly replay: ReplayDecision;
}

/** Milliseconds from the moment the answered call went upstream. */
export interface TurnTimings {
  readonly upstream_ms: number;
  readonly first_reasoning_ms: number | null;
  readonly first_content_ms: number | null;
  readonly total_ms: number;
}

/** How a request's assistant message was found in the store (docs/sessions-and-replay.md#how-a-request-finds-its-session). */
export type MatchKey = "fingerprint" | "call_id" | "depth" | "elsewhere" | "envelope";

/** Why a route's field did not go upstream. */
export type LeftOutBy = "verdict" | "rejected" | "opt_out";

/**
 * As stored: one entry per assistant message of the request, so a turn's
 * decision grows with its history; entries are tuples, and an attachment
 * names its turn only when that is not the message's matched turn. The
 * verdict's key of a left-out field is the turn's own provider, host and
 * upstream model. docs/api.md#get-v1sessionsid shows it expanded.
 */
export interface ReplayDecision {
  /** The fields the answered call could carry. */
  readonly effective: readonly string[];
  /** Per known assistant message: [index in the request's messages, the stored turn, the key that found it]. */
  readonly matched: readonly (readonly [message: number, turnId: string, by: MatchKey])[];
  /** The fields each message carried upstream: [message, fields], or [message, fields, turn] when not its matched turn (null: the client's own value). */
  readonly attached: readonly (readonly [message: number, fields: readonly string[], turnId?: string | null])[];
  /** Messages that got the must_echo placeholder. */
  readonly placeholders: readonly number[];
  /** Route fields that did not go upstream: [field, why]. */
  readonly left_out: readonly (readonly [field: string, by: LeftOutBy])[];
  /** Whether the answer came from the retry without a rejected field. */
  readonly retried: boolean;
}

import type { CarrierField } from "../providers/contract.js";
import type { DepthAsked, DepthMatch, FingerprintMatch, ReplaySource, SessionModelConfig } from "./turns.js";

/**
 * What TurnStorage.lookup is asked: the parts the turn pipeline reads of the
 * stored turns, any of them in one call. A chat request asks `request`
 * once, before its first upstream call; session finding asks `depths` when
 * its keys left messages of an explicit session unplaced; replay asks
 * `carriersOf` for chosen turns the request's read did not carry.
 */
export interface TurnLookup {
  readonly request?: RequestLookup;
  readonly depths?: DepthLookup;
  /** Turn ids whose carriers are wanted; ids of no turn are absent from the answer. */
  readonly carriersOf?: readonly string[];
}

/** The request's read before its first upstream call. */
export interface RequestLookup {
  /** The API key's hash and the request's keys (fingerprints and call keys, see TurnKeys): the turns filed under that hash they match. */
  readonly keyHash: string;
  readonly keys: readonly string[];
  /** The route's (provider, host, model): its verdict fields. */
  readonly provider: string;
  readonly host: string;
  readonly model: string;
  /** The client's X-Session-Id: its model config is answered whether or not a match is in it. */
  readonly explicit: string | undefined;
  /** Whether the carriers of each key's newest match are wanted (the route may replay them). */
  readonly withCarriers: boolean;
}

/** Position matching's read: a session's turns at depths in their conversations (1-based, NewTurn.depth) filed under a key's hash. */
export interface DepthLookup {
  readonly keyHash: string;
  readonly sessionId: string;
  readonly asked: readonly DepthAsked[];
}

/** The request's part of the answer: every part exactly what the store holds at that moment. */
export interface RequestLookupAnswer {
  /** Per key, the turns it matches, most recent first. */
  readonly matches: Map<string, FingerprintMatch[]>;
  readonly verdictFields: readonly CarrierField[];
  /** Model config per session (each matched session, and the explicit one); a session with `{}` may be absent. */
  readonly modelConfigs: ReadonlyMap<string, Readonly<SessionModelConfig>>;
  /**
   * Carriers by turn id: with `withCarriers`, those of each key's newest
   * match; and those `carriersOf` asked for. A turn the request ends up
   * choosing that is not here (an older match) is asked for with `carriersOf`.
   */
  readonly sources: ReadonlyMap<string, ReplaySource>;
}

/** TurnStorage.lookup's answer: the parts not asked for are empty. */
export interface TurnLookupAnswer extends RequestLookupAnswer {
  /**
   * Per depth asked, the session's turns at it, newest first and at most
   * TURNS_PER_DEPTH, each saying whether its stored prompt is the one asked
   * with: what position matching chooses from.
   */
  readonly atDepths: ReadonlyMap<number, DepthMatch[]>;
}

import type { ChatMessage } from "../../providers/contract.js";
import type { DepthAsked, FingerprintMatch } from "../../storage/turns.js";
import type { MatchKey } from "../../storage/session-history.js";
import type { TurnStorage } from "../../storage/storage.js";
import { keysOf, type TurnKeys } from "../../conversation/fingerprint.js";
import { chooseSession, chooseTurn } from "./conversation-order.js";
import { placeByDepth } from "./depth-placement.js";

/** How a request's assistant messages were matched, for the per-request debug line. */
export interface MatchCounts {
  readonly assistant: number;
  /** By fingerprint (text and tool calls, normalised), in the request's session. */
  fingerprint: number;
  /** By tool-call ids and names alone (the text blanked or the arguments reshaped). */
  ids: number;
  /** Explicit session only: the k-th assistant message as the session's turn k. */
  position: number;
  /** The same turn stored in another session under this key (no candidate in the request's session). */
  elsewhere: number;
}

/** Where a request belongs, and which stored turn each of its assistant messages is. */
export interface SessionMatch {
  readonly sessionId: string | undefined;
  /** Stored turn id per message index; only assistant messages that matched have one. */
  readonly turnIds: ReadonlyMap<number, string>;
  /** Per message index in turnIds, the key that found its turn (recorded with the turn, docs/api.md#session-history). */
  readonly matchedBy: ReadonlyMap<number, MatchKey>;
  /** The stored turn the request continues (its last assistant message's turn), if any. */
  readonly parentTurnId: string | undefined;
  readonly matched: MatchCounts;
}

/** What finding a session reads: the stored turns a request's keys match (TurnStorage.lookup's `matches`) and the turns at depths. */
export interface SessionReads {
  matchesFor(keyHash: string, keys: readonly string[]): Promise<Map<string, FingerprintMatch[]>>;
  turnsAtDepths: TurnStorage["turnsAtDepths"];
}

/**
 * Finds a request's session (docs/sessions-and-replay.md#how-a-request-finds-its-session).
 *
 * Each assistant message is looked up by its keys (TurnKeys: the fingerprint,
 * and for tool-call turns with unique ids the ids-and-names key), scoped to
 * the API key, all messages in one query through the two indexes; no scan of
 * a session's turns.
 *
 * Implicit: the session is the one most of the messages have a stored turn
 * in (ties: the most recent turn of the latest message); explicit
 * (`X-Session-Id`): that session. Within it, each message takes the
 * candidate that continues the conversation (see chooseTurn), so a reply
 * like "OK." stored twice is told apart by what came before it. A message
 * with no candidate there is, for an explicit session, a turn at the
 * message's depth chosen by the conversation's links (placeByDepth: a client
 * that re-renders a turn's text still gets its reasoning back, and a turn
 * another client stored in the session takes no place of this
 * conversation's), else the most recent identical turn under the key.
 * `byDepth: false` (the client compacted its history: its k-th message is
 * no longer the session's k-th turn) leaves position matching out.
 */
export async function findSession(
  turns: SessionReads,
  keyHash: string,
  messages: readonly ChatMessage[],
  explicit: string | undefined,
  byDepth = true,
): Promise<SessionMatch> {
  const assistantIndexes: number[] = [];
  const keys: TurnKeys[] = [];
  const lookup: string[] = [];
  messages.forEach((message, index) => {
    if (message.role !== "assistant") return;
    const turnKeys = keysOf(message.content, message.tool_calls);
    assistantIndexes.push(index);
    keys.push(turnKeys);
    lookup.push(turnKeys.fingerprint);
    if (turnKeys.callKey !== undefined) lookup.push(turnKeys.callKey);
  });
  const byKey = await turns.matchesFor(keyHash, lookup);
  // per assistant message, in order: its stored matches, most recent first; by ids alone after those by fingerprint
  const byFingerprint = keys.map((turnKeys) => byKey.get(turnKeys.fingerprint) ?? NONE);
  const candidates = keys.map((turnKeys, ordinal) =>
    withCallMatches(byFingerprint[ordinal], turnKeys.callKey === undefined ? undefined : byKey.get(turnKeys.callKey)),
  );

  const sessionId = explicit ?? chooseSession(candidates);
  const chosen: (FingerprintMatch | undefined)[] = [];
  const used = new Set<string>();
  let previous: FingerprintMatch | undefined;
  for (let ordinal = 0; ordinal < candidates.length; ordinal++) {
    const match = sessionId === undefined ? undefined : chooseTurn(candidates[ordinal], sessionId, previous, ordinal, used);
    chosen.push(match);
    if (match) {
      used.add(match.id);
      previous = match;
    }
  }

  // the k-th assistant message is a turn at depth k of the explicit session: one query for every message its keys did not
  // place, with the messages the request sends before each (what asked for the turn it is, a stored turn's prompt)
  const unplaced: DepthAsked[] =
    explicit === undefined || !byDepth
      ? []
      : chosen.flatMap((match, ordinal) =>
          match ? [] : [{ depth: ordinal + 1, prompt: JSON.stringify(messages.slice((assistantIndexes[ordinal - 1] ?? -1) + 1, assistantIndexes[ordinal])) }],
        );
  const byPosition = unplaced.length > 0 ? placeByDepth(chosen, await turns.turnsAtDepths(keyHash, explicit!, unplaced)) : undefined;

  const matched: MatchCounts = { assistant: assistantIndexes.length, fingerprint: 0, ids: 0, position: 0, elsewhere: 0 };
  const turnIds = new Map<number, string>();
  const matchedBy = new Map<number, MatchKey>();
  assistantIndexes.forEach((index, ordinal) => {
    let turn = chosen[ordinal];
    let by: MatchKey;
    if (turn) {
      by = byFingerprint[ordinal].includes(turn) ? "fingerprint" : "call_id";
      if (by === "fingerprint") matched.fingerprint++;
      else matched.ids++;
    } else if (byPosition?.byDepth.has(ordinal) && (turn = byPosition.turns[ordinal])) {
      by = "depth";
      matched.position++;
    } else if ((turn = candidates[ordinal][0])) {
      // last resort, the most recent identical turn elsewhere under this key: its reasoning is the one that produced this text
      by = "elsewhere";
      matched.elsewhere++;
    } else return;
    turnIds.set(index, turn.id);
    matchedBy.set(index, by);
  });

  const last = assistantIndexes.at(-1);
  const parentTurnId = last === undefined ? undefined : turnIds.get(last);
  return { sessionId, turnIds, matchedBy, parentTurnId, matched };
}

const NONE: readonly FingerprintMatch[] = [];

/** The fingerprint's matches, then those found by ids alone that it did not find; no copy when there are none. */
function withCallMatches(byFingerprint: readonly FingerprintMatch[], byCalls: readonly FingerprintMatch[] | undefined): readonly FingerprintMatch[] {
  if (!byCalls || byCalls.length === 0) return byFingerprint;
  const extra = byCalls.filter((match) => !byFingerprint.some((listed) => listed.id === match.id));
  return extra.length === 0 ? byFingerprint : [...byFingerprint, ...extra];
}

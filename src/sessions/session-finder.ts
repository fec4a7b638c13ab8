import type { ChatMessage } from "../plugins/contract.js";
import type { SessionStore } from "../store/session-store.js";
import { fingerprintMessage } from "./fingerprint.js";

/** Where a request belongs, and which stored turn each of its assistant messages is. */
export interface SessionMatch {
  readonly sessionId: string | undefined;
  /** Stored turn id per message index; only assistant messages that matched have one. */
  readonly turnIds: ReadonlyMap<number, string>;
  /** The stored turn the request continues (its last assistant message's turn), if any. */
  readonly parentTurnId: string | undefined;
}

/**
 * Finds a request's session (SPEC §4, §5 rule 1).
 *
 * Explicit (`X-Session-Id`): each assistant message is matched by fingerprint
 * within that session, else by position (the k-th assistant message is the
 * session's turn k) — a client that re-renders a turn's text still gets its
 * reasoning back — else by fingerprint anywhere under the key.
 *
 * Implicit: each assistant message is matched by fingerprint, scoped to the
 * API key; the session is the one of the last matched message's most recent
 * turn, and the other messages prefer turns of that same session. One query for
 * all assistant messages, through the fingerprint index; no history scans.
 */
export function findSession(store: SessionStore, keyHash: string, messages: readonly ChatMessage[], explicit: string | undefined): SessionMatch {
  const assistantIndexes: number[] = [];
  const fingerprints: string[] = [];
  messages.forEach((message, index) => {
    if (message.role !== "assistant") return;
    assistantIndexes.push(index);
    fingerprints.push(fingerprintMessage(message));
  });
  const byFingerprint = store.fingerprintMatchesMany(keyHash, fingerprints);
  // per assistant message, in order: its stored matches, most recent first
  const candidates = fingerprints.map((fingerprint) => byFingerprint.get(fingerprint) ?? []);

  let sessionId = explicit;
  if (sessionId === undefined) {
    for (let ordinal = candidates.length - 1; ordinal >= 0 && sessionId === undefined; ordinal--) {
      sessionId = candidates[ordinal]![0]?.session_id;
    }
  }

  const inSession = candidates.map((found) => found.find((candidate) => candidate.session_id === sessionId));
  // the k-th assistant message is turn k of the explicit session: one query for every message its fingerprint did not place
  const unplaced = explicit === undefined ? [] : inSession.flatMap((match, ordinal) => (match ? [] : [ordinal + 1]));
  const byPosition = unplaced.length > 0 ? store.turnsAtPositions(explicit!, unplaced) : undefined;

  const turnIds = new Map<number, string>();
  assistantIndexes.forEach((index, ordinal) => {
    // last resort, the most recent identical turn elsewhere under this key: its reasoning is the one that produced this text
    const chosen = inSession[ordinal] ?? byPosition?.get(ordinal + 1) ?? candidates[ordinal]![0];
    if (chosen) turnIds.set(index, chosen.id);
  });

  const last = assistantIndexes.at(-1);
  const parentTurnId = last === undefined ? undefined : turnIds.get(last);
  return { sessionId, turnIds, parentTurnId };
}

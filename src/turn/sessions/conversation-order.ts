import type { FingerprintMatch } from "../../storage/turns.js";

/**
 * Settling ambiguous matches by the conversation's order (docs/sessions-and-replay.md#how-a-request-finds-its-session).
 * Normalised text makes turns alike: "OK." in two conversations, the same
 * reply twice in one, the same reply on two branches of one. What tells them
 * apart is what the request holds before them.
 */

/**
 * The session most of the request's assistant messages have a stored turn
 * in; among sessions alike in that, the one of the most recent turn of the
 * latest message (a fingerprint seen in several sessions resolves
 * to the most recent). A generic last reply does not pull a conversation
 * into another session that happens to hold the same reply.
 */
export function chooseSession(candidates: readonly (readonly FingerprintMatch[])[]): string | undefined {
  const counts = new Map<string, number>();
  for (const found of candidates) {
    for (let index = 0; index < found.length; index++) {
      const session = found[index].session_id;
      // a session counts once per message, however many of its turns look like it
      if (found.findIndex((match) => match.session_id === session) === index) counts.set(session, (counts.get(session) ?? 0) + 1);
    }
  }
  if (counts.size <= 1) return counts.keys().next().value;
  const most = Math.max(...counts.values());
  for (let ordinal = candidates.length - 1; ordinal >= 0; ordinal--) {
    for (const match of candidates[ordinal]) if (counts.get(match.session_id) === most) return match.session_id;
  }
  return undefined;
}

/**
 * The candidate of `sessionId` that continues the conversation: the turn
 * whose parent is the turn matched to the previous assistant message; for
 * the request's first assistant message, a turn that opened its
 * conversation; else the most recent. A turn already matched to an earlier
 * message of the request is not matched again.
 */
export function chooseTurn(
  found: readonly FingerprintMatch[],
  sessionId: string,
  previous: FingerprintMatch | undefined,
  ordinal: number,
  used: ReadonlySet<string>,
): FingerprintMatch | undefined {
  let fallback: FingerprintMatch | undefined;
  for (const match of found) {
    if (match.session_id !== sessionId || used.has(match.id)) continue;
    if (previous ? match.parent_turn_id === previous.id : ordinal === 0 && match.parent_turn_id === null) return match;
    fallback ??= match;
  }
  return fallback;
}

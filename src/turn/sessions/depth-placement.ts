import type { DepthMatch, FingerprintMatch } from "../../storage/turns.js";

/**
 * Position matching (docs/sessions-and-replay.md, "Position matching"): the
 * k-th assistant message of a request with an explicit session, when its
 * keys placed it nowhere, is a turn stored at depth k of that session — the
 * k-th of the conversation it was stored in. Several clients may share a
 * session (one key reusing one X-Session-Id), so a depth may hold turns of
 * several conversations; the conversation's own links decide among them:
 *
 * 1. the parent of the turn placed for message k+1, else a child of the
 *    turn placed for message k−1, is taken — repeated until nothing more is
 *    placed, so one placed message places its unplaced neighbours in turn;
 * 2. else the newest candidate asked for by the very messages the request
 *    sends before message k (its stored prompt), and rule 1 runs again;
 * 3. else a depth with one candidate left (for k = 1, one turn that opened a
 *    conversation) when no neighbour is placed, and rule 1 runs again;
 * 4. what is still open takes the newest candidate left.
 *
 * A turn placed for one message is not placed for another. A turn another
 * client stored in the session never takes a depth from this conversation:
 * it has its own depth, and a candidate that breaks the links around it
 * loses to one that keeps them.
 *
 * `placed` holds, per assistant message in order, the turn its keys placed
 * (or undefined); the answer is the same list with the depth placements
 * filled in, and `byDepth` tells which came from here.
 */
export function placeByDepth(
  placed: readonly (FingerprintMatch | undefined)[],
  atDepth: ReadonlyMap<number, readonly DepthMatch[]>,
): { turns: (FingerprintMatch | undefined)[]; byDepth: Set<number> } {
  const turns = [...placed];
  const byDepth = new Set<number>();
  const used = new Set<string>();
  for (const turn of turns) if (turn) used.add(turn.id);
  const open = (ordinal: number): DepthMatch[] => (atDepth.get(ordinal + 1) ?? []).filter((turn) => !used.has(turn.id));
  const place = (ordinal: number, turn: FingerprintMatch) => {
    turns[ordinal] = turn;
    byDepth.add(ordinal);
    used.add(turn.id);
  };
  // rule 1: the parent of the next message's turn, else a child of the previous message's turn
  const linked = (ordinal: number): FingerprintMatch | undefined => {
    const after = turns[ordinal + 1];
    const before = turns[ordinal - 1];
    const left = open(ordinal);
    return (
      (after?.parent_turn_id ? left.find((turn) => turn.id === after.parent_turn_id) : undefined) ??
      (before ? left.find((turn) => turn.parent_turn_id === before.id) : undefined)
    );
  };
  // for the first message, only turns that opened a conversation, while there are any
  const candidates = (ordinal: number): FingerprintMatch[] => {
    const left = open(ordinal);
    const openers = ordinal === 0 ? left.filter((turn) => turn.parent_turn_id === null) : left;
    return openers.length > 0 ? openers : left;
  };
  const unplaced = () => turns.flatMap((turn, ordinal) => (turn === undefined && atDepth.has(ordinal + 1) ? [ordinal] : []));
  const untilSettled = (pick: (ordinal: number) => FingerprintMatch | undefined): boolean => {
    let any = false;
    for (let changed = true; changed;) {
      changed = false;
      for (const ordinal of unplaced()) {
        const turn = pick(ordinal);
        if (turn) {
          place(ordinal, turn);
          changed = any = true;
        }
      }
    }
    return any;
  };
  // links first, then the same prompt, then a lone candidate (each may link its neighbours in turn), then the newest left
  const samePrompt = (ordinal: number) => open(ordinal).find((turn) => turn.samePrompt);
  const lone = (ordinal: number) => {
    const left = candidates(ordinal);
    return left.length === 1 && !hasPlacedNeighbour(turns, ordinal) ? left[0] : undefined;
  };
  for (;;) {
    untilSettled(linked);
    if (untilSettled(samePrompt)) continue;
    if (!untilSettled(lone)) break;
  }
  for (const ordinal of unplaced()) {
    const turn = linked(ordinal) ?? candidates(ordinal)[0];
    if (turn) place(ordinal, turn);
  }
  return { turns, byDepth };
}

/** Whether a neighbour is placed: then rule 1 decided, and a lone candidate it did not pick waits for rule 3. */
function hasPlacedNeighbour(turns: readonly (FingerprintMatch | undefined)[], ordinal: number): boolean {
  return turns[ordinal - 1] !== undefined || turns[ordinal + 1] !== undefined;
}

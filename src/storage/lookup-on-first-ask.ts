import type { RequestLookup, TurnLookupAnswer } from "./request-lookup.js";
import type { TurnStorage } from "./storage.js";
import type { DepthAsked } from "./turns.js";

/**
 * A request's read before its first upstream call (TurnStorage.lookup's
 * `request`), made when session finding first asks for its matches, since
 * only finding computes the keys; the rest of the answer — verdicts,
 * session config, carriers — is kept for the plan. A networked store
 * answers it all in one round trip. `firstRead` wraps that read (the plan
 * traces it); finding's reads of depths go straight to `turns`. Its own
 * scope: nothing of the caller's holds the answer's carriers longer than
 * the plan does (docs/performance.md#what-a-waiting-turn-holds).
 */
export function lookupOnFirstAsk(
  turns: Pick<TurnStorage, "lookup">,
  query: Omit<RequestLookup, "keyHash" | "keys">,
  firstRead: (read: Promise<TurnLookupAnswer>) => Promise<TurnLookupAnswer> = (read) => read,
) {
  let read: Promise<TurnLookupAnswer> | undefined;
  const lookup = (keyHash: string, keys: readonly string[]) => (read = firstRead(turns.lookup({ request: { ...query, keyHash, keys } })));
  return {
    /** What session finding reads: its matches come from the request's read. */
    turns: {
      matchesFor: async (keyHash: string, keys: readonly string[]) => (await lookup(keyHash, keys)).matches,
      turnsAtDepths: async (keyHash: string, sessionId: string, asked: readonly DepthAsked[]) =>
        (await turns.lookup({ depths: { keyHash, sessionId, asked } })).atDepths,
    },
    /** The whole answer the read got (or, had finding asked none, one without keys). */
    answer: (keyHash: string): Promise<TurnLookupAnswer> => read ?? lookup(keyHash, []),
  };
}

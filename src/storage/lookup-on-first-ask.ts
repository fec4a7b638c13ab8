import type { RequestLookup, RequestLookupAnswer } from "./request-lookup.js";
import type { TurnStorage } from "./storage.js";
import type { DepthAsked } from "./turns.js";

/**
 * A request's one read before its first upstream call (TurnStorage.lookup),
 * made when session finding first asks for its matches, since only finding
 * computes the keys; the rest of the answer — verdicts, session config,
 * carriers — is kept for the plan. A networked store answers it all in one
 * round trip. Its own scope: nothing of the caller's holds the answer's
 * carriers longer than the plan does (docs/performance.md#what-a-waiting-turn-holds).
 */
export function lookupOnFirstAsk(turns: Pick<TurnStorage, "lookup" | "turnsAtDepths">, query: Omit<RequestLookup, "keyHash" | "keys">) {
  let read: Promise<RequestLookupAnswer> | undefined;
  const lookup = (keyHash: string, keys: readonly string[]) => (read = turns.lookup({ ...query, keyHash, keys }));
  return {
    /** What session finding reads: its matches come from the lookup. */
    turns: {
      matchesFor: async (keyHash: string, keys: readonly string[]) => (await lookup(keyHash, keys)).matches,
      turnsAtDepths: (keyHash: string, sessionId: string, asked: readonly DepthAsked[]) => turns.turnsAtDepths(keyHash, sessionId, asked),
    },
    /** The whole answer the lookup got (or, had finding asked none, one without keys). */
    answer: (keyHash: string): Promise<RequestLookupAnswer> => read ?? lookup(keyHash, []),
  };
}

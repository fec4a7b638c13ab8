import type { Storage } from "../../src/storage/storage.js";
import type { SessionReads } from "../../src/turn/sessions/session-finder.js";

/** What findSession reads, from a store: the matches as the request's lookup answers them, and the turns at depths. */
export function sessionReads(store: Storage): SessionReads {
  return {
    matchesFor: async (keyHash, keys) =>
      (await store.turns.lookup({ request: { keyHash, keys, provider: "none", host: "none", model: "none", explicit: undefined, withCarriers: false } }))
        .matches,
    turnsAtDepths: async (keyHash, sessionId, asked) => (await store.turns.lookup({ depths: { keyHash, sessionId, asked } })).atDepths,
  };
}

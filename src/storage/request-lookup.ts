import type { CarrierField } from "../plugins/contract.js";
import type { Storage } from "./storage.js";
import type { FingerprintMatch, ReplaySource, SessionModelConfig } from "./turns.js";

/** What a chat request looks up before its first upstream call (see Storage.lookup). */
export interface RequestLookup {
  /** The API key's hash and the request's keys: as TurnStorage.matchesFor. */
  readonly keyHash: string;
  readonly keys: readonly string[];
  /** The route's (provider, host, model): its verdict fields, as VerdictStorage.fieldsFor. */
  readonly provider: string;
  readonly host: string;
  readonly model: string;
  /** The client's X-Session-Id: its model config is answered whether or not a match is in it. */
  readonly explicit: string | undefined;
  /** Whether the carriers of each key's newest match are wanted (the route may replay them). */
  readonly withCarriers: boolean;
}

/** The answer: every part exactly what the separate operation answers at that moment. */
export interface RequestLookupAnswer {
  readonly matches: Map<string, FingerprintMatch[]>;
  readonly verdictFields: readonly CarrierField[];
  /** Model config per session (each matched session, and the explicit one); a session with `{}` may be absent. */
  readonly modelConfigs: ReadonlyMap<string, Readonly<SessionModelConfig>>;
  /**
   * With `withCarriers`: the carriers of each key's newest match, by turn id.
   * A turn the request ends up choosing that is not here (an older match) is
   * read with TurnStorage.replaySources.
   */
  readonly sources: ReadonlyMap<string, ReplaySource>;
}

/**
 * Storage.lookup from the separate operations, for a backend in this process
 * (there is no round trip to save): the matches and the verdicts side by
 * side, then the configs and carriers of what matched.
 */
export async function lookupByParts(storage: Pick<Storage, "turns" | "verdicts" | "sessionConfig">, query: RequestLookup): Promise<RequestLookupAnswer> {
  const [matches, verdictFields] = await Promise.all([
    storage.turns.matchesFor(query.keyHash, query.keys),
    storage.verdicts.fieldsFor(query.provider, query.host, query.model),
  ]);
  const sessions = new Set<string>();
  const newest = new Map<string, string>();
  for (const [key, list] of matches) {
    for (const match of list) sessions.add(match.session_id);
    if (list[0]) newest.set(key, list[0].id);
  }
  if (query.explicit !== undefined) sessions.add(query.explicit);
  const modelConfigs = new Map<string, Readonly<SessionModelConfig>>();
  for (const session of sessions) modelConfigs.set(session, await storage.sessionConfig.modelConfig(session));
  const bySource =
    query.withCarriers && newest.size > 0
      ? await storage.turns.replaySources(new Map([...newest.values()].map((id) => [id, id])))
      : new Map<string, ReplaySource>();
  return { matches, verdictFields, modelConfigs, sources: bySource };
}

import type { CarrierField } from "../providers/contract.js";
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

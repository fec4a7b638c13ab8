import type { TurnLookup, TurnLookupAnswer } from "../request-lookup.js";
import type { DepthMatch, FingerprintMatch, ReplaySource, SessionModelConfig } from "../turns.js";
import type { ReplayReads } from "./replay-reads.js";
import type { SessionConfigSql } from "./session-config.js";
import type { VerdictStore } from "./verdict-store.js";

const NO_DEPTHS: ReadonlyMap<number, DepthMatch[]> = new Map();
const NO_VERDICT_FIELDS: readonly never[] = [];

/**
 * TurnStorage.lookup in this process: for the request's read, the matches
 * and the verdicts, then the configs and carriers of what matched, read one
 * after the other; then the depths and the carriers asked for. Every part
 * answers synchronously (there is no round trip to save), so the whole
 * answer is built in one go rather than as a chain of awaits, one per part:
 * it runs on every chat request.
 */
export function lookupInProcess(
  parts: { readonly reads: ReplayReads; readonly verdicts: VerdictStore; readonly configs: SessionConfigSql },
  query: TurnLookup,
): TurnLookupAnswer {
  const { request, depths, carriersOf } = query;
  const matches = request ? parts.reads.matchesFor(request.keyHash, request.keys) : new Map<string, FingerprintMatch[]>();
  const verdictFields = request ? parts.verdicts.fieldsFor(request.provider, request.host, request.model) : NO_VERDICT_FIELDS;
  const modelConfigs = new Map<string, Readonly<SessionModelConfig>>();
  const wanted = new Map<string, string>();
  for (const list of matches.values()) {
    for (const match of list) if (!modelConfigs.has(match.session_id)) modelConfigs.set(match.session_id, parts.configs.modelConfig(match.session_id));
    if (request?.withCarriers && list[0]) wanted.set(list[0].id, list[0].id);
  }
  if (request?.explicit !== undefined && !modelConfigs.has(request.explicit)) modelConfigs.set(request.explicit, parts.configs.modelConfig(request.explicit));
  if (carriersOf) for (const id of carriersOf) wanted.set(id, id);
  const sources: ReadonlyMap<string, ReplaySource> = wanted.size > 0 ? parts.reads.replaySources(wanted) : new Map();
  const atDepths = depths ? parts.reads.turnsAtDepths(depths.keyHash, depths.sessionId, depths.asked) : NO_DEPTHS;
  return { matches, verdictFields, modelConfigs, sources, atDepths };
}

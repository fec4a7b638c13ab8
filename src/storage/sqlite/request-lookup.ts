import type { RequestLookup, RequestLookupAnswer } from "../request-lookup.js";
import type { ReplaySource, SessionModelConfig } from "../turns.js";
import type { ReplayReads } from "./replay-reads.js";
import type { SessionConfigSql } from "./session-config.js";
import type { VerdictStore } from "./verdict-store.js";

/**
 * TurnStorage.lookup in this process: the matches and the verdicts, then the
 * configs and carriers of what matched, read one after the other. Every
 * part answers synchronously (there is no round trip to save), so the whole
 * answer is built in one go rather than as a chain of awaits, one per part:
 * it runs on every chat request.
 */
export function lookupInProcess(
  parts: { readonly reads: ReplayReads; readonly verdicts: VerdictStore; readonly configs: SessionConfigSql },
  query: RequestLookup,
): RequestLookupAnswer {
  const matches = parts.reads.matchesFor(query.keyHash, query.keys);
  const verdictFields = parts.verdicts.fieldsFor(query.provider, query.host, query.model);
  const modelConfigs = new Map<string, Readonly<SessionModelConfig>>();
  const newest = new Map<string, string>();
  for (const list of matches.values()) {
    for (const match of list) if (!modelConfigs.has(match.session_id)) modelConfigs.set(match.session_id, parts.configs.modelConfig(match.session_id));
    if (list[0]) newest.set(list[0].id, list[0].id);
  }
  if (query.explicit !== undefined && !modelConfigs.has(query.explicit)) modelConfigs.set(query.explicit, parts.configs.modelConfig(query.explicit));
  const sources: ReadonlyMap<string, ReplaySource> = query.withCarriers && newest.size > 0 ? parts.reads.replaySources(newest) : new Map();
  return { matches, verdictFields, modelConfigs, sources };
}

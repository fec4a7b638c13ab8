import { CALL_KEY_PREFIX } from "../../conversation/fingerprint.js";
import type { CarrierField } from "../../providers/contract.js";
import type { RequestLookup, RequestLookupAnswer } from "../request-lookup.js";
import type { FingerprintMatch, ReplaySource, SessionModelConfig } from "../turns.js";
import type { Sql } from "./connection.js";
import { parseJson } from "../rows.js";
import type { SourceCache } from "./source-cache.js";
import { run } from "./run.js";

/** A key seen in thousands of sessions (a greeting) must not load them all: the newest few are enough to pick one. */
export const MATCHES_PER_KEY = 8;

// Everything a chat request reads before its first upstream call, in one statement and so one round trip, as rows of
// one shape told apart by `kind`: 'm' a key's match (per key one probe of its index, newest first, at most MATCHES_PER_KEY), 'r' the carriers of each
// key's newest match (only when $8) except the turns whose carriers this instance holds ($9), 'c' the model config
// of a matched or the explicit ($4) session when not '{}', 'v' one of the route's verdict fields ($5, $6, $7). One
// snapshot answers all of it: a turn committed on another instance before the statement began is in every part or
// in none. The rows come in no stated order (sorting them cost the server more than the few matches of a key cost to
// sort here).
export const LOOKUP = `
  WITH m AS (
    SELECT k.key, t.seq, t.id, t.session_id, t.parent_turn_id
      FROM unnest($2::text[]) AS k(key)
      CROSS JOIN LATERAL (SELECT f.seq, f.id, f.session_id, f.parent_turn_id FROM turns f
                           WHERE f.key_hash = $1 AND f.fingerprint = k.key ORDER BY f.seq DESC LIMIT ${MATCHES_PER_KEY}) t
    UNION ALL
    SELECT k.key, t.seq, t.id, t.session_id, t.parent_turn_id
      FROM unnest($3::text[]) AS k(key)
      CROSS JOIN LATERAL (SELECT f.seq, f.id, f.session_id, f.parent_turn_id FROM turns f
                           WHERE f.key_hash = $1 AND f.call_key = k.key ORDER BY f.seq DESC LIMIT ${MATCHES_PER_KEY}) t
  )
  SELECT 'm' AS kind, key, seq, id, session_id, parent_turn_id, NULL AS a, NULL AS b, NULL AS c, NULL AS d, NULL AS e FROM m
  UNION ALL
  SELECT 'r', NULL, NULL, t.id, t.session_id, NULL, t.plugin, t.upstream_model, t.reasoning_text, t.reasoning_details, t.native_record
    FROM turns t WHERE $8::boolean AND t.id IN (SELECT DISTINCT ON (key) id FROM m ORDER BY key, seq DESC) AND t.id <> ALL($9::text[])
  UNION ALL
  SELECT 'c', NULL, NULL, s.id, s.id, NULL, s.model_config, NULL, NULL, NULL, NULL
    FROM (SELECT session_id FROM m UNION SELECT $4::text WHERE $4 IS NOT NULL) w
    JOIN sessions s ON s.id = w.session_id WHERE s.model_config <> '{}'
  UNION ALL
  SELECT 'v', NULL, NULL, NULL, NULL, NULL, field, NULL, NULL, NULL, NULL FROM verdicts WHERE provider = $5 AND host = $6 AND model = $7`;

interface LookupRow {
  kind: "m" | "r" | "c" | "v";
  key: string | null;
  /** bigint, as text */
  seq: string | null;
  id: string | null;
  session_id: string | null;
  parent_turn_id: string | null;
  a: string | null;
  b: string | null;
  c: string | null;
  d: string | null;
  e: string | null;
}

/** A match with its turn's `seq`: the order turns were stored in. */
interface SequencedMatch extends FingerprintMatch {
  readonly seq: number;
}

const NOTHING_HELD: ReadonlyMap<string, ReplaySource> = new Map();

/** Storage.lookup in one round trip (see LOOKUP). */
export async function lookupRequest(sql: Sql, sources: SourceCache, query: RequestLookup): Promise<RequestLookupAnswer> {
  const unique = [...new Set(query.keys)];
  const fingerprints = unique.filter((key) => !key.startsWith(CALL_KEY_PREFIX));
  const callKeys = fingerprints.length === unique.length ? [] : unique.filter((key) => key.startsWith(CALL_KEY_PREFIX));
  // carriers of a turn never change: those this instance built before need not travel again
  const held = query.withCarriers ? sources.heldFor(unique) : NOTHING_HELD;
  const rows = await run<LookupRow>(sql, LOOKUP, [
    query.keyHash,
    fingerprints,
    callKeys,
    query.explicit ?? null,
    query.provider,
    query.host,
    query.model,
    query.withCarriers,
    [...held.keys()],
  ]);
  const found = new Map<string, SequencedMatch[]>();
  const verdictFields: CarrierField[] = [];
  const modelConfigs = new Map<string, Readonly<SessionModelConfig>>();
  const carriers = new Map<string, ReplaySource>();
  for (const row of rows) {
    if (row.kind === "m") {
      const match = { seq: Number(row.seq), id: row.id!, session_id: row.session_id!, parent_turn_id: row.parent_turn_id };
      const list = found.get(row.key!);
      if (list) list.push(match);
      else found.set(row.key!, [match]);
    } else if (row.kind === "r") {
      carriers.set(
        row.id!,
        sources.fromRow({
          id: row.id!,
          session_id: row.session_id!,
          plugin: row.a!,
          upstream_model: row.b!,
          reasoning_text: row.c,
          reasoning_details: row.d,
          native_record: row.e,
        }),
      );
    } else if (row.kind === "c") {
      modelConfigs.set(row.id!, parseJson<SessionModelConfig>(row.a) ?? {});
    } else {
      verdictFields.push(row.a as CarrierField);
    }
  }
  const matches = new Map<string, FingerprintMatch[]>();
  for (const [key, list] of found) {
    // newest first; the newest is the match whose carriers the answer gives (read above, or held here)
    if (list.length > 1) list.sort((a, b) => b.seq - a.seq);
    matches.set(
      key,
      list.map(({ id, session_id, parent_turn_id }) => ({ id, session_id, parent_turn_id })),
    );
    if (!query.withCarriers) continue;
    const newest = list[0].id;
    const source = held.get(newest);
    if (source) carriers.set(newest, source);
    sources.matchedNewest(key, newest);
  }
  return { matches, verdictFields, modelConfigs, sources: carriers };
}

import { callKeyOf } from "../../conversation/fingerprint.js";
import type { RequestLookup, RequestLookupAnswer } from "../request-lookup.js";
import { TURN_COLUMNS, turnJsonColumns, turnValues, type ReplayRow } from "../rows.js";
import { storedPromptSql } from "../prompt-heads.js";
import { TURNS_PER_DEPTH, type TurnStorage } from "../storage.js";
import type { DepthAsked, DepthMatch, NewTurn, ReplaySource } from "../turns.js";
import type { Sql } from "./connection.js";
import { lookupRequest } from "./pg-request-lookup.js";
import { run } from "./run.js";
import type { SourceCache } from "./source-cache.js";

export const REPLAY_SOURCES = `SELECT id, session_id, plugin, upstream_model, reasoning_text, reasoning_details, native_record FROM turns WHERE id = ANY($1::text[])`;
// per depth two probes, both bounded by the session: the turn at that position when its depth is its position
// (UNIQUE (session_id, position)), and the newest others of that depth (the partial turns_depth). The key's hash is
// compared as an expression (key_hash || '') that no index serves, so the planner cannot take turns_fingerprint
// (key_hash, …) and read every turn of the key, whatever its statistics say
// The stored prompt (its head joined back, prompt-heads.ts) is compared here ($4, per depth), so only whether it matched comes back.
export const TURNS_AT_DEPTHS = `
  SELECT k.depth, t.seq, t.id, t.session_id, t.parent_turn_id, ${storedPromptSql("t")} = k.prompt AS same_prompt
    FROM unnest($3::int[], $4::text[]) AS k(depth, prompt)
    CROSS JOIN LATERAL (SELECT f.seq, f.id, f.session_id, f.parent_turn_id, f.prompt, f.prompt_head FROM turns f
                         WHERE f.session_id = $1 AND f.position = k.depth AND f.depth = f.position AND f.key_hash || '' = $2
                        UNION ALL
                        (SELECT f.seq, f.id, f.session_id, f.parent_turn_id, f.prompt, f.prompt_head FROM turns f
                          WHERE f.session_id = $1 AND f.depth = k.depth AND f.depth <> f.position AND f.key_hash || '' = $2
                          ORDER BY f.seq DESC LIMIT ${TURNS_PER_DEPTH})) t
  ORDER BY t.seq DESC`;
// the session row is created with its first turn, or locked and its position counter moved on: one statement, one
// implicit transaction, so the turn is committed (and read by every instance) when it resolves. The turn's prompt
// head ($23, its text $25) is written with it unless stored already, and then locked, not rewritten (DO UPDATE … WHERE
// false locks the row it meets): a session removed meanwhile cannot take the head away from this turn (pg-catalogue.ts)
export const INSERT_TURN = `
  WITH h AS (
    INSERT INTO prompt_heads (hash, text) SELECT $23, $25 WHERE $23::text IS NOT NULL
    ON CONFLICT (hash) DO UPDATE SET text = EXCLUDED.text WHERE false
  ), s AS (
    INSERT INTO sessions (id, key_hash, model, parent_id, model_config, last_position, created_at, updated_at)
    VALUES ($2, $19, $4, NULL, '{}', 1, $18, $18)
    ON CONFLICT (id) DO UPDATE SET last_position = sessions.last_position + 1
    RETURNING last_position
  )
  INSERT INTO turns (${TURN_COLUMNS}, position)
  SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, COALESCE($24::integer, s.last_position), s.last_position FROM s
  RETURNING position`;

/**
 * Turns in PostgreSQL. Which turns match is never cached in this process:
 * every lookup is one statement, so what any instance committed is what
 * the next lookup on any other instance finds (a per-instance cache of
 * matches would need a check of its own against the other instances'
 * writes, one round trip of its own: the lookup costs the same). Only the
 * objects built from the carriers of the turns it returns are kept
 * (SourceCache), since a stored turn's carriers never change.
 */
export class PgTurns implements TurnStorage {
  constructor(
    private readonly sql: Sql,
    private readonly sources: SourceCache,
  ) {}

  /** One statement, one round trip, one snapshot (see pg-request-lookup.ts). */
  lookup(query: RequestLookup): Promise<RequestLookupAnswer> {
    return lookupRequest(this.sql, this.sources, query);
  }

  async replaySources<K>(turnIds: ReadonlyMap<K, string>): Promise<Map<K, ReplaySource>> {
    const found = new Map<K, ReplaySource>();
    if (turnIds.size === 0) return found;
    const rows = await run<ReplayRow>(this.sql, REPLAY_SOURCES, [[...new Set(turnIds.values())]]);
    const byId = new Map(rows.map((row) => [row.id, this.sources.fromRow(row)]));
    for (const [key, id] of turnIds) {
      const source = byId.get(id);
      if (source) found.set(key, source);
    }
    return found;
  }

  async turnsAtDepths(keyHash: string, sessionId: string, asked: readonly DepthAsked[]): Promise<Map<number, DepthMatch[]>> {
    const found = new Map<number, DepthMatch[]>();
    if (asked.length === 0) return found;
    const rows = await run<{ depth: number; id: string; session_id: string; parent_turn_id: string | null; same_prompt: boolean }>(this.sql, TURNS_AT_DEPTHS, [
      sessionId,
      keyHash,
      asked.map((entry) => entry.depth),
      asked.map((entry) => entry.prompt),
    ]);
    for (const row of rows) {
      const match = { id: row.id, session_id: row.session_id, parent_turn_id: row.parent_turn_id, samePrompt: row.same_prompt === true };
      const list = found.get(row.depth);
      if (!list) found.set(row.depth, [match]);
      else if (list.length < TURNS_PER_DEPTH) list.push(match);
    }
    return found;
  }

  /** Every turn is committed by its own statement: whether others run beside it changes nothing here. */
  async save(turn: NewTurn): Promise<void> {
    const json = turnJsonColumns(turn);
    await run(this.sql, INSERT_TURN, [...turnValues(turn, new Date().toISOString(), callKeyOf(turn.toolCalls), json), json.prompt.head?.text ?? null]);
  }
}

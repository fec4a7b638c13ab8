import {
  HISTORY_TURN_COLUMNS,
  toHistorySession,
  toHistoryTurn,
  type HistorySession,
  type HistorySessionRow,
  type HistoryTurn,
  type HistoryTurnRow,
  type SessionHistory,
  type SessionQuery,
} from "../session-history.js";
import { storedPromptSql } from "../prompt-heads.js";
import type { Sql } from "./connection.js";
import type { PostgresMigration } from "./migrations.js";
import { run, transaction } from "./run.js";

/** Session history, numbered as SQLite's (src/storage/sqlite/session-history.ts): each turn's TurnAudit, JSON as text. */
export const SESSION_HISTORY_MIGRATION: PostgresMigration = {
  version: 500,
  name: "turns keep their route, timings and replay decision",
  sql: "ALTER TABLE turns ADD COLUMN audit text;",
};

// a session's model and provider are its newest turn's (the row's own for a session without turns), as the catalogue's list
const SESSION_COLUMNS = `
  SELECT s.id, s.key_hash, COALESCE(last.model, s.model) AS model, last.provider AS provider, s.parent_id, s.created_at,
         GREATEST(s.updated_at, COALESCE(last.created_at, '')) AS updated_at,
         (SELECT COUNT(*) FROM turns t WHERE t.session_id = s.id)::int AS turn_count,
         (SELECT ${storedPromptSql("f")} FROM turns f WHERE f.session_id = s.id ORDER BY f.position LIMIT 1) AS first_prompt
    FROM sessions s LEFT JOIN turns last ON last.session_id = s.id AND last.position = (SELECT MAX(position) FROM turns WHERE session_id = s.id)`;

// A page is chosen first, by each session's activity (its newest turn, one probe of UNIQUE (session_id, position)) and
// the filters; only the page's sessions then get their count, model and first prompt. Every filter is skipped when its
// parameter is NULL. The user's messages are read from the prompt's JSON, parsed only when its text holds the words as
// JSON writes them ($10); a prompt stored escaped (it held a NUL, see nul-escape.ts) or holding an escaped NUL, which
// json's ->> cannot turn into text, is searched in its answer only
const PAGE = `
  WITH page AS MATERIALIZED (
    SELECT a.id, a.updated_at FROM (
      SELECT s.id, s.model, GREATEST(s.updated_at, COALESCE((SELECT t.created_at FROM turns t WHERE t.session_id = s.id ORDER BY t.position DESC LIMIT 1), '')) AS updated_at
        FROM sessions s
       WHERE ($1::text IS NULL OR s.key_hash = $1)) a
     WHERE ($5::text IS NULL OR a.updated_at >= $5) AND ($6::text IS NULL OR a.updated_at < $6)
       AND ($7::text IS NULL OR a.updated_at < $7 OR (a.updated_at = $7 AND a.id < $8))
       AND ($2::text IS NULL OR a.model = $2 OR EXISTS (SELECT 1 FROM turns t WHERE t.session_id = a.id AND t.model = $2))
       AND ($3::text IS NULL OR EXISTS (SELECT 1 FROM turns t WHERE t.session_id = a.id AND t.provider = $3))
       AND ($4::text IS NULL OR EXISTS (
             SELECT 1 FROM turns t WHERE t.session_id = a.id AND (
               strpos(lower(t.content), lower($4)) > 0 OR (strpos(lower(t.prompt), lower($10)) > 0 AND EXISTS (
                 SELECT 1 FROM json_array_elements(CASE WHEN left(t.prompt, 1) = '[' AND strpos(t.prompt, '\\u0000') = 0 THEN t.prompt::json END) m
                  WHERE m->>'role' = 'user' AND strpos(lower(m->>'content'), lower($4)) > 0)))))
     ORDER BY a.updated_at DESC, a.id DESC LIMIT $9)
  ${SESSION_COLUMNS} JOIN page p ON p.id = s.id
  ORDER BY p.updated_at DESC, p.id DESC`;
const SESSION = `${SESSION_COLUMNS} WHERE s.id = $1`;
const TURNS = `SELECT ${HISTORY_TURN_COLUMNS} FROM turns WHERE session_id = $1 ORDER BY position`;

/** Session history read from PostgreSQL. */
export class PgSessionHistory implements SessionHistory {
  constructor(private readonly sql: Sql) {}

  async page(query: SessionQuery): Promise<HistorySession[]> {
    // the generic plan of a prepared statement prices every filter at once, past jit_above_cost: compiling it took
    // a second for a page of five sessions that runs in milliseconds. Off for this statement only.
    const rows = await transaction(this.sql, async (tx) => {
      await run(tx, "SET LOCAL jit = off");
      return run<HistorySessionRow>(tx, PAGE, [
        query.keyHash ?? null,
        query.model ?? null,
        query.provider ?? null,
        query.text ?? null,
        query.since ?? null,
        query.until ?? null,
        query.after?.updatedAt ?? null,
        query.after?.id ?? null,
        query.limit,
        query.text === undefined ? null : JSON.stringify(query.text).slice(1, -1),
      ]);
    });
    return rows.map(toHistorySession);
  }

  async session(sessionId: string): Promise<{ session: HistorySession; turns: HistoryTurn[] } | undefined> {
    const [row] = await run<HistorySessionRow>(this.sql, SESSION, [sessionId]);
    if (!row) return undefined;
    const turns = (await run<HistoryTurnRow>(this.sql, TURNS, [sessionId])).map(toHistoryTurn);
    return { session: toHistorySession(row), turns };
  }
}

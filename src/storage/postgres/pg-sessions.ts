import { storedPromptSql } from "../prompt-heads.js";
import type { SessionStorage } from "../storage.js";
import { ListDeadlineError, type BranchResult, type SessionDetail, type SessionQuery, type SessionSummary } from "../sessions.js";
import type { Sql } from "./connection.js";
import { checkpointsOf, insertCheckpoint, newCheckpointId, newestCheckpoint } from "./pg-checkpoints.js";
import { TURN_ROW_COLUMNS, type TurnRow } from "../rows.js";
import { toSessionDetail, toSessionSummary, type SessionRow, type SessionSummaryRow } from "../session-rows.js";
import { run, transaction } from "./run.js";

const INSERT_SESSION = `INSERT INTO sessions (id, key_hash, model, parent_id, model_config, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $6) ON CONFLICT (id) DO NOTHING`;
// a session's model, provider and last activity are its newest turn's, or the row's own for a session without turns
const SESSION_ROW = `
  SELECT s.id, s.key_hash, COALESCE(last.model, s.model) AS model, last.provider AS provider, s.parent_id, s.model_config, s.created_at,
         GREATEST(s.updated_at, COALESCE(last.created_at, '')) AS updated_at
    FROM sessions s LEFT JOIN turns last ON last.session_id = s.id AND last.position = (SELECT MAX(position) FROM turns WHERE session_id = s.id)
   WHERE s.id = $1`;
const SESSION_TURNS = `SELECT ${TURN_ROW_COLUMNS} FROM turns WHERE session_id = $1 ORDER BY position`;
// A page is chosen first, by each session's activity (its newest turn, one probe of UNIQUE (session_id, position)) and
// the filters; only the page's sessions then get their count, model and first prompt. Every filter is skipped when its
// parameter is NULL. The user's messages are read from the prompt's JSON, parsed only when its text holds the words as
// JSON writes them ($10); a prompt stored escaped (it held a NUL, see nul-escape.ts) or holding an escaped NUL, which
// json's ->> cannot turn into text, is searched in its answer only
const LIST = `
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
  SELECT s.id, s.key_hash, COALESCE(last.model, s.model) AS model, last.provider AS provider, s.parent_id, s.created_at,
         GREATEST(s.updated_at, COALESCE(last.created_at, '')) AS updated_at,
         (SELECT COUNT(*) FROM turns t WHERE t.session_id = s.id)::int AS turns,
         (SELECT ${storedPromptSql("f")} FROM turns f WHERE f.session_id = s.id ORDER BY f.position LIMIT 1) AS first_prompt
    FROM sessions s LEFT JOIN turns last ON last.session_id = s.id AND last.position = (SELECT MAX(position) FROM turns WHERE session_id = s.id)
    JOIN page p ON p.id = s.id
  ORDER BY p.updated_at DESC, p.id DESC`;
const DELETE_SESSION = `DELETE FROM sessions WHERE id = $1`;
// a removed session's prompt heads go unless another turn names them (prompt-heads.ts). They are locked first: a turn
// written meanwhile locks its head too (pg-turns.ts), so the check below, a statement of its own, sees that turn
const HEADS_OF = `SELECT DISTINCT prompt_head FROM turns WHERE session_id = $1 AND prompt_head IS NOT NULL`;
const LOCK_HEADS = `SELECT hash FROM prompt_heads WHERE hash = ANY($1::text[]) ORDER BY hash FOR UPDATE`;
const DROP_UNNAMED_HEADS = `DELETE FROM prompt_heads h WHERE h.hash = ANY($1::text[]) AND NOT EXISTS (SELECT 1 FROM turns t WHERE t.prompt_head = h.hash)`;
// the copies, every carrier column copied in SQL (never re-serialised), with the keys stateless clients find them by
const COPY_TURNS = `
  INSERT INTO turns (id, session_id, position, parent_turn_id, model, plugin, provider, host, upstream_model, prompt, content, tool_calls,
                     reasoning_text, reasoning_details, native_record, usage, finish_reason, upstream_id, created_at, key_hash, fingerprint, call_key, prompt_head, depth)
  SELECT 'turn_' || substr(md5(random()::text || clock_timestamp()::text || position::text), 1, 24), $1, position, NULL, model, plugin, provider, host, upstream_model,
         prompt, content, tool_calls, reasoning_text, reasoning_details, native_record, usage, finish_reason, upstream_id, created_at, key_hash, fingerprint, call_key, prompt_head, position
    FROM turns WHERE session_id = $2 AND position <= $3 ORDER BY position`;
const LINK_BY_POSITION = `UPDATE turns SET parent_turn_id = (SELECT p.id FROM turns p WHERE p.session_id = turns.session_id AND p.position = turns.position - 1) WHERE session_id = $1`;
const DROP_ARCHIVED_COPIES = `DELETE FROM turns WHERE session_id = $1 AND position IN (SELECT position FROM turns WHERE session_id = $2 AND active = 0 AND position <= $3)`;
const LINK_ACROSS_GAPS = `UPDATE turns SET parent_turn_id = (SELECT p.id FROM turns p WHERE p.session_id = turns.session_id AND p.position < turns.position ORDER BY p.position DESC LIMIT 1) WHERE session_id = $1`;
const SET_LAST_POSITION = `UPDATE sessions SET last_position = COALESCE((SELECT MAX(position) FROM turns WHERE session_id = $1), 0) WHERE id = $1`;

// what the server reports for a statement that statement_timeout cancelled
const QUERY_CANCELED = "57014";

/**
 * The sessions an operator lists, shows, branches and removes, straight from
 * PostgreSQL. Lists run on `listSql`, a pool of their own where the store
 * gives one, so a search holds none of the connections chat requests wait for.
 */
export class PgSessions implements SessionStorage {
  constructor(
    private readonly sql: Sql,
    private readonly listSql: Sql = sql,
  ) {}

  async list(query: SessionQuery): Promise<SessionSummary[]> {
    if (query.deadline !== undefined && Date.now() >= query.deadline) throw new ListDeadlineError();
    try {
      return await this.listRows(query);
    } catch (error) {
      if ((error as { code?: unknown } | undefined)?.code === QUERY_CANCELED && query.deadline !== undefined) throw new ListDeadlineError();
      throw error;
    }
  }

  private async listRows(query: SessionQuery): Promise<SessionSummary[]> {
    // the generic plan of a prepared statement prices every filter at once, past jit_above_cost: compiling it took
    // a second for a page of five sessions that runs in milliseconds. Off for this statement only. The deadline is
    // the server's to keep: statement_timeout cancels the statement where it is.
    const rows = await transaction(this.listSql, async (tx) => {
      await run(tx, "SET LOCAL jit = off");
      if (query.deadline !== undefined) await tx.query(`SET LOCAL statement_timeout = ${Math.max(1, Math.ceil(query.deadline - Date.now()))}`);
      return run<SessionSummaryRow>(tx, LIST, [
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
    return rows.map(toSessionSummary);
  }

  async show(sessionId: string): Promise<SessionDetail | undefined> {
    const [row] = await run<SessionRow>(this.sql, SESSION_ROW, [sessionId]);
    if (!row) return undefined;
    return toSessionDetail(row, await run<TurnRow>(this.sql, SESSION_TURNS, [sessionId]), await checkpointsOf(this.sql, sessionId));
  }

  /** As SessionStorage.branch says, in one transaction (see the SQLite backend's for the two cases). */
  async branch(sourceId: string, newId: string, at: number | undefined): Promise<BranchResult | undefined> {
    return transaction(this.sql, async (tx) => {
      const [source] = await run<SessionRow>(tx, SESSION_ROW, [sourceId]);
      if (!source) return undefined;
      const now = new Date().toISOString();
      await run(tx, INSERT_SESSION, [newId, source.key_hash, source.model, sourceId, source.model_config, now]);
      const limit = at ?? 2_147_483_647;
      let turns = (await run(tx, COPY_TURNS, [newId, sourceId, limit])).count;
      const newest = await newestCheckpoint(tx, sourceId);
      if (!newest || newest.archivedThrough === null || limit <= newest.archivedThrough) {
        await run(tx, LINK_BY_POSITION, [newId]);
        await run(tx, SET_LAST_POSITION, [newId]);
        return { id: newId, turns, checkpoint: undefined };
      }
      turns -= (await run(tx, DROP_ARCHIVED_COPIES, [newId, sourceId, limit])).count;
      await run(tx, LINK_ACROSS_GAPS, [newId]);
      await run(tx, SET_LAST_POSITION, [newId]);
      const copy = { ...newest, id: newCheckpointId(), sessionId: newId, anchorResponseId: null, createdAt: now };
      await insertCheckpoint(tx, copy);
      return { id: newId, turns, checkpoint: copy.id };
    });
  }

  async remove(sessionId: string): Promise<boolean> {
    return transaction(this.sql, async (tx) => {
      const heads = (await run<{ prompt_head: string }>(tx, HEADS_OF, [sessionId])).map((row) => row.prompt_head);
      const removed = (await run(tx, DELETE_SESSION, [sessionId])).count > 0;
      if (heads.length > 0) {
        await run(tx, LOCK_HEADS, [heads]);
        await run(tx, DROP_UNNAMED_HEADS, [heads]);
      }
      return removed;
    });
  }
}

import type { Statement } from "better-sqlite3";
import type { Migration } from "./database.js";
import type { Db } from "./database.js";
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

/**
 * Session history (versions 500–599): each turn keeps what the gateway
 * decided and measured for it (TurnAudit, JSON), null for turns stored
 * before.
 */
export const SESSION_HISTORY_MIGRATIONS: readonly Migration[] = [
  { version: 500, name: "turns keep their route, timings and replay decision", sql: "ALTER TABLE turns ADD COLUMN audit TEXT;" },
];

// a session's model and provider are its newest turn's (the row's own for a session without turns), as the catalogue's list
const SESSION_COLUMNS = `
  SELECT s.id, s.key_hash, COALESCE(last.model, s.model) AS model, last.provider AS provider, s.parent_id, s.created_at,
         MAX(s.updated_at, COALESCE(last.created_at, '')) AS updated_at,
         (SELECT COUNT(*) FROM turns t WHERE t.session_id = s.id) AS turn_count,
         (SELECT ${storedPromptSql("f")} FROM turns f WHERE f.session_id = s.id ORDER BY f.position LIMIT 1) AS first_prompt
    FROM sessions s LEFT JOIN turns last ON last.session_id = s.id AND last.position = (SELECT MAX(position) FROM turns WHERE session_id = s.id)`;

// A page is chosen first, by each session's activity (its newest turn, one seek of UNIQUE (session_id, position)) and
// the filters, cheap ones first; only the page's sessions then get their count, model and first prompt. Every filter
// is skipped when its parameter is NULL. The text is looked for in the answer and in the user's messages: a prompt's
// JSON is parsed only when its text holds the words as JSON writes them (@jsonText), which few prompts do.
const PAGE = `
  WITH page AS MATERIALIZED (
    SELECT a.id, a.updated_at FROM (
      SELECT s.id, s.model, MAX(s.updated_at, COALESCE((SELECT t.created_at FROM turns t WHERE t.session_id = s.id ORDER BY t.position DESC LIMIT 1), '')) AS updated_at
        FROM sessions s
       WHERE (@keyHash IS NULL OR s.key_hash = @keyHash)) a
     WHERE (@since IS NULL OR a.updated_at >= @since) AND (@until IS NULL OR a.updated_at < @until)
       AND (@afterAt IS NULL OR a.updated_at < @afterAt OR (a.updated_at = @afterAt AND a.id < @afterId))
       AND (@model IS NULL OR a.model = @model OR EXISTS (SELECT 1 FROM turns t WHERE t.session_id = a.id AND t.model = @model))
       AND (@provider IS NULL OR EXISTS (SELECT 1 FROM turns t WHERE t.session_id = a.id AND t.provider = @provider))
       AND (@text IS NULL OR EXISTS (
             SELECT 1 FROM turns t WHERE t.session_id = a.id AND (
               instr(lower(t.content), lower(@text)) > 0 OR (instr(lower(t.prompt), lower(@jsonText)) > 0 AND EXISTS (
                 SELECT 1 FROM json_each(t.prompt) m
                  WHERE json_extract(m.value, '$.role') = 'user' AND instr(lower(json_extract(m.value, '$.content')), lower(@text)) > 0)))))
     ORDER BY a.updated_at DESC, a.id DESC LIMIT @limit)
  ${SESSION_COLUMNS} JOIN page p ON p.id = s.id
  ORDER BY p.updated_at DESC, p.id DESC`;

/** Session history read from state.db; `settle` first commits turns made durable but not committed yet. */
export class SqliteSessionHistory implements SessionHistory {
  private readonly statements: { page: Statement<[object]>; session: Statement<[string]>; turns: Statement<[string]> };

  constructor(
    db: Db,
    private readonly settle: () => void,
  ) {
    this.statements = {
      page: db.prepare(PAGE),
      session: db.prepare(`${SESSION_COLUMNS} WHERE s.id = ?`),
      turns: db.prepare(`SELECT ${HISTORY_TURN_COLUMNS} FROM turns WHERE session_id = ? ORDER BY position`),
    };
  }

  async page(query: SessionQuery): Promise<HistorySession[]> {
    this.settle();
    const rows = this.statements.page.all({
      keyHash: query.keyHash ?? null,
      model: query.model ?? null,
      provider: query.provider ?? null,
      text: query.text ?? null,
      jsonText: query.text === undefined ? null : JSON.stringify(query.text).slice(1, -1),
      since: query.since ?? null,
      until: query.until ?? null,
      afterAt: query.after?.updatedAt ?? null,
      afterId: query.after?.id ?? null,
      limit: query.limit,
    }) as HistorySessionRow[];
    return rows.map(toHistorySession);
  }

  async session(sessionId: string): Promise<{ session: HistorySession; turns: HistoryTurn[] } | undefined> {
    this.settle();
    const row = this.statements.session.get(sessionId) as HistorySessionRow | undefined;
    if (!row) return undefined;
    const turns = (this.statements.turns.all(sessionId) as HistoryTurnRow[]).map(toHistoryTurn);
    return { session: toHistorySession(row), turns };
  }
}

import type { Statement } from "better-sqlite3";
import { ListDeadlineError, type BranchResult, type SessionDetail, type SessionQuery, type SessionSummary } from "../sessions.js";
import { TURN_ROW_COLUMNS, type TurnRow } from "../rows.js";
import { toSessionDetail, toSessionSummary, type SessionRow, type SessionSummaryRow } from "../session-rows.js";
import { storedPromptSql } from "../prompt-heads.js";
import type { SessionStorage } from "../storage.js";
import type { CheckpointStore } from "./checkpoint-store.js";
import type { Db } from "./database.js";
import { IN_TIME, isPastDeadline, ListReader, registerInTime } from "./list-reader.js";
import type { Logger } from "../../foundation/logging/logger.js";

// a session's model, provider and last activity are its newest turn's (see TurnWrites.writeTurn), or the row's own for a session without turns
const SESSION_ROW = `
  SELECT s.id, s.key_hash, COALESCE(last.model, s.model) AS model, last.provider AS provider, s.parent_id, s.model_config, s.created_at,
         MAX(s.updated_at, COALESCE(last.created_at, '')) AS updated_at
    FROM sessions s LEFT JOIN turns last ON last.session_id = s.id AND last.position = (SELECT MAX(position) FROM turns WHERE session_id = s.id)
   WHERE s.id = ?`;

// A page is chosen first, by each session's activity (its newest turn, one seek of UNIQUE (session_id, position)) and
// the filters, cheap ones first; only the page's sessions then get their count, model and first prompt. Every filter
// is skipped when its parameter is NULL. The text is looked for in the answer and in the user's messages: a prompt's
// JSON is parsed only when its text holds the words as JSON writes them (@jsonText), which few prompts do. Each
// session considered first checks the list's deadline (list-reader.ts), so a search stops where it is when it runs out.
const LIST = `
  WITH page AS MATERIALIZED (
    SELECT a.id, a.updated_at FROM (
      SELECT s.id, s.model, MAX(s.updated_at, COALESCE((SELECT t.created_at FROM turns t WHERE t.session_id = s.id ORDER BY t.position DESC LIMIT 1), '')) AS updated_at
        FROM sessions s
       WHERE (@keyHash IS NULL OR s.key_hash = @keyHash)) a
     WHERE ${IN_TIME}(@deadline) AND (@since IS NULL OR a.updated_at >= @since) AND (@until IS NULL OR a.updated_at < @until)
       AND (@afterAt IS NULL OR a.updated_at < @afterAt OR (a.updated_at = @afterAt AND a.id < @afterId))
       AND (@model IS NULL OR a.model = @model OR EXISTS (SELECT 1 FROM turns t WHERE t.session_id = a.id AND t.model = @model))
       AND (@provider IS NULL OR EXISTS (SELECT 1 FROM turns t WHERE t.session_id = a.id AND t.provider = @provider))
       AND (@text IS NULL OR EXISTS (
             SELECT 1 FROM turns t WHERE t.session_id = a.id AND (
               instr(lower(t.content), lower(@text)) > 0 OR (instr(lower(t.prompt), lower(@jsonText)) > 0 AND EXISTS (
                 SELECT 1 FROM json_each(t.prompt) m
                  WHERE json_extract(m.value, '$.role') = 'user' AND instr(lower(json_extract(m.value, '$.content')), lower(@text)) > 0)))))
     ORDER BY a.updated_at DESC, a.id DESC LIMIT @limit)
  SELECT s.id, s.key_hash, COALESCE(last.model, s.model) AS model, last.provider AS provider, s.parent_id, s.created_at,
         MAX(s.updated_at, COALESCE(last.created_at, '')) AS updated_at,
         (SELECT COUNT(*) FROM turns t WHERE t.session_id = s.id) AS turns,
         (SELECT ${storedPromptSql("f")} FROM turns f WHERE f.session_id = s.id ORDER BY f.position LIMIT 1) AS first_prompt
    FROM sessions s LEFT JOIN turns last ON last.session_id = s.id AND last.position = (SELECT MAX(position) FROM turns WHERE session_id = s.id)
    JOIN page p ON p.id = s.id
  ORDER BY p.updated_at DESC, p.id DESC`;

/**
 * The sessions an operator lists, shows, branches and removes, from
 * state.db. `settle` first commits turns made durable but not committed
 * yet; `forgetConfig` drops a session's model config from memory when its
 * row changes here.
 */
export class SessionStore implements SessionStorage {
  private readonly statements: {
    insertSession: Statement<unknown[]>;
    list: Statement<[object]>;
    sessionRow: Statement<[string]>;
    sessionTurns: Statement<[string]>;
    deleteSession: Statement<[string]>;
    headsOf: Statement<[string]>;
    dropUnnamedHead: Statement<[string, string]>;
  };
  private reader: ListReader | undefined;

  constructor(
    private readonly db: Db,
    private readonly checkpoints: CheckpointStore,
    private readonly settle: () => void,
    private readonly forgetConfig: (sessionId: string) => void,
  ) {
    registerInTime(db);
    this.statements = {
      insertSession: db.prepare(
        `INSERT OR IGNORE INTO sessions (id, key_hash, model, parent_id, model_config, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
      ),
      list: db.prepare(LIST),
      sessionRow: db.prepare(SESSION_ROW),
      sessionTurns: db.prepare(`SELECT ${TURN_ROW_COLUMNS} FROM turns WHERE session_id = ? ORDER BY position`),
      deleteSession: db.prepare(`DELETE FROM sessions WHERE id = ?`),
      headsOf: db.prepare(`SELECT DISTINCT prompt_head FROM turns WHERE session_id = ? AND prompt_head IS NOT NULL`).pluck(),
      dropUnnamedHead: db.prepare(`DELETE FROM prompt_heads WHERE hash = ? AND NOT EXISTS (SELECT 1 FROM turns WHERE prompt_head = ?)`),
    };
  }

  /** Lists from now on run in a worker with its own connection to `file` (the gateway's store: list-reader.ts). */
  listOffThread(file: string, log: Logger): void {
    this.reader ??= new ListReader(file, LIST, log);
  }

  async close(): Promise<void> {
    await this.reader?.stop();
  }

  async list(query: SessionQuery): Promise<SessionSummary[]> {
    this.settle();
    const params = {
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
      deadline: query.deadline ?? null,
    };
    try {
      const rows = ((await this.reader?.list(params)) ?? this.statements.list.all(params)) as SessionSummaryRow[];
      return rows.map(toSessionSummary);
    } catch (error) {
      throw isPastDeadline(error) ? new ListDeadlineError() : error;
    }
  }

  async show(id: string): Promise<SessionDetail | undefined> {
    this.settle();
    const row = this.statements.sessionRow.get(id) as SessionRow | undefined;
    if (!row) return undefined;
    return toSessionDetail(row, this.statements.sessionTurns.all(id) as TurnRow[], this.checkpoints.list(id));
  }

  /**
   * `sessions branch ID --at N`, compaction-aware, in one transaction. The
   * turns are copied in SQL (every carrier byte for byte, never
   * re-serialised), with their fingerprints and the key hash they were
   * written under so stateless clients of the branch find it. When N lies
   * past the session's newest checkpoint, the copies of archived turns are
   * dropped and the checkpoint is copied in their place: the branch holds
   * what the session sends upstream, the active turns and the summary. When
   * N lies inside or before the summarised range, the branch is the session
   * as it stood at turn N, every turn active. Either way the branch shares
   * no row with its parent, so later compactions of one never touch the other.
   */
  async branch(sourceId: string, newId: string, at: number | undefined): Promise<BranchResult | undefined> {
    this.settle();
    this.forgetConfig(newId);
    return this.db.transaction((): BranchResult | undefined => {
      const source = this.statements.sessionRow.get(sourceId) as SessionRow | undefined;
      if (!source) return undefined;
      const now = new Date().toISOString();
      this.statements.insertSession.run(newId, source.key_hash, source.model, sourceId, source.model_config, now, now);
      const limit = at ?? Number.MAX_SAFE_INTEGER;
      let turns = this.db
        .prepare(
          `INSERT INTO turns (id, session_id, position, parent_turn_id, model, plugin, provider, host, upstream_model, prompt, content, tool_calls,
                              reasoning_text, reasoning_details, native_record, usage, finish_reason, upstream_id, created_at, key_hash, fingerprint, call_key, prompt_head, depth)
           SELECT 'turn_' || lower(hex(randomblob(12))), ?, position, NULL, model, plugin, provider, host, upstream_model, prompt, content, tool_calls,
                  reasoning_text, reasoning_details, native_record, usage, finish_reason, upstream_id, created_at, key_hash, fingerprint, call_key, prompt_head, position
             FROM turns WHERE session_id = ? AND position <= ? ORDER BY position`,
        )
        .run(newId, sourceId, limit).changes;
      const newest = this.checkpoints.list(sourceId).at(-1);
      if (!newest || newest.archivedThrough === null || limit <= newest.archivedThrough) {
        // parents follow positions in the copy: turn N's parent is turn N-1
        this.db
          .prepare(
            `UPDATE turns SET parent_turn_id = (SELECT p.id FROM turns p WHERE p.session_id = turns.session_id AND p.position = turns.position - 1) WHERE session_id = ?`,
          )
          .run(newId);
        return { id: newId, turns, checkpoint: undefined };
      }
      turns -= this.db
        .prepare(`DELETE FROM turns WHERE session_id = ? AND position IN (SELECT position FROM turns WHERE session_id = ? AND active = 0 AND position <= ?)`)
        .run(newId, sourceId, limit).changes;
      // each copied turn follows the one before it in the branch, across the gap the archived turns left
      this.db
        .prepare(
          `UPDATE turns SET parent_turn_id = (SELECT p.id FROM turns p WHERE p.session_id = turns.session_id AND p.position < turns.position ORDER BY p.position DESC LIMIT 1) WHERE session_id = ?`,
        )
        .run(newId);
      const copy = { ...newest, id: this.checkpoints.newCheckpointId(), sessionId: newId, anchorResponseId: null, createdAt: now };
      this.checkpoints.insert(copy);
      return { id: newId, turns, checkpoint: copy.id };
    })();
  }

  async remove(id: string): Promise<boolean> {
    this.settle();
    this.forgetConfig(id);
    // the session's prompt heads go with it unless another session's turns name them (prompt-heads.ts)
    return this.db.transaction(() => {
      const heads = this.statements.headsOf.all(id) as string[];
      const removed = this.statements.deleteSession.run(id).changes > 0;
      for (const hash of heads) this.statements.dropUnnamedHead.run(hash, hash);
      return removed;
    })();
  }
}

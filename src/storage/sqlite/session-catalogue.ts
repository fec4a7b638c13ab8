import type { Statement } from "better-sqlite3";
import type { BranchResult, SessionDetail, SessionSummary } from "../turns.js";
import { PROMPT_HEAD_JOIN, toSessionDetail, toSessionSummary, type SessionRow, type SessionSummaryRow, type TurnRow } from "../rows.js";
import type { SessionCatalogue } from "../storage.js";
import type { CheckpointStore } from "./checkpoint-store.js";
import type { Db } from "./database.js";

/**
 * The sessions an operator lists, shows, branches and removes. `settle`
 * first commits turns made durable but not committed yet; `forgetConfig`
 * drops a session's model config from memory when its row changes here.
 */
export class SessionCatalogueSql implements SessionCatalogue {
  private readonly statements: {
    insertSession: Statement<unknown[]>;
    listSessions: Statement<[number]>;
    sessionRow: Statement<[string]>;
    sessionTurns: Statement<[string]>;
    deleteSession: Statement<[string]>;
    headsOf: Statement<[string]>;
    dropUnnamedHead: Statement<[string, string]>;
  };

  constructor(
    private readonly db: Db,
    private readonly checkpoints: CheckpointStore,
    private readonly settle: () => void,
    private readonly forgetConfig: (sessionId: string) => void,
  ) {
    this.statements = {
      insertSession: db.prepare(
        `INSERT OR IGNORE INTO sessions (id, key_hash, model, parent_id, model_config, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
      ),
      // a session's last activity and model are its newest turn's (see TurnWrites.writeTurn), or the row's own for a session without turns
      listSessions: db.prepare(
        `SELECT s.id, COALESCE(last.model, s.model) AS model, s.parent_id, s.created_at, MAX(s.updated_at, COALESCE(last.created_at, '')) AS updated_at,
                (SELECT COUNT(*) FROM turns t WHERE t.session_id = s.id) AS turns
           FROM sessions s LEFT JOIN turns last ON last.session_id = s.id AND last.position = (SELECT MAX(position) FROM turns WHERE session_id = s.id)
          ORDER BY updated_at DESC, s.rowid DESC LIMIT ?`,
      ),
      sessionRow: db.prepare(
        `SELECT s.id, s.key_hash, COALESCE(last.model, s.model) AS model, s.parent_id, s.model_config, s.created_at, MAX(s.updated_at, COALESCE(last.created_at, '')) AS updated_at
           FROM sessions s LEFT JOIN turns last ON last.session_id = s.id AND last.position = (SELECT MAX(position) FROM turns WHERE session_id = s.id)
          WHERE s.id = ?`,
      ),
      sessionTurns: db.prepare(`SELECT t.*, h.text AS prompt_head_text FROM turns t ${PROMPT_HEAD_JOIN} WHERE t.session_id = ? ORDER BY t.position`),
      deleteSession: db.prepare(`DELETE FROM sessions WHERE id = ?`),
      headsOf: db.prepare(`SELECT DISTINCT prompt_head FROM turns WHERE session_id = ? AND prompt_head IS NOT NULL`).pluck(),
      dropUnnamedHead: db.prepare(`DELETE FROM prompt_heads WHERE hash = ? AND NOT EXISTS (SELECT 1 FROM turns WHERE prompt_head = ?)`),
    };
  }

  async list(limit: number): Promise<SessionSummary[]> {
    this.settle();
    return (this.statements.listSessions.all(limit) as SessionSummaryRow[]).map(toSessionSummary);
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

import { randomBytes } from "node:crypto";
import type { Statement } from "better-sqlite3";
import type { Checkpoint, CheckpointArchive, NewCheckpoint } from "../checkpoints.js";
import { CHECKPOINT_COLUMNS, checkpointValues, deepestOnChain, toCheckpoint, type CheckpointRow } from "../rows.js";
import type { CheckpointStorage } from "../storage.js";
import type { Db } from "./database.js";

/**
 * Checkpoints and the active flag of turns (migration 200). `settle` first
 * commits turns made durable but not committed yet: a checkpoint archives
 * turns by id. `ancestry` is the response chain ending at a response
 * (ResponseStore.ancestry), what the checkpoint in force is found on.
 */
export class CheckpointStore implements CheckpointStorage {
  /** Prepared once: every `sessions show` and GET /v1/sessions/{id} reads a session's checkpoints. */
  private readonly ofSession: Statement<[string]>;

  constructor(
    private readonly db: Db,
    private readonly settle: () => void,
    private readonly ancestry: (responseId: string) => string[],
  ) {
    this.ofSession = db.prepare(`SELECT * FROM compaction_checkpoints WHERE session_id = ? ORDER BY created_at, rowid`);
  }

  /** An id for a checkpoint made here (a branch's copy); the same shape as the ones compaction makes. */
  newCheckpointId(): string {
    return `ckpt_${randomBytes(12).toString("hex")}`;
  }

  /**
   * The checkpoint in force for a request of `sessionId` continuing response
   * `parentId`: of those anchored on the chain ending there, the one
   * anchored deepest, newest on a tie. Most sessions have none, and then the
   * chain is not walked. Answered with a chain's history (ResponseStore.get).
   */
  inForce(sessionId: string, parentId: string): Checkpoint | undefined {
    // most sessions have no checkpoint: then the chain is not walked
    if (this.db.prepare("SELECT 1 FROM compaction_checkpoints WHERE session_id = ? LIMIT 1").get(sessionId) === undefined) return undefined;
    const chain = this.ancestry(parentId);
    if (chain.length === 0) return undefined;
    const rows = this.db
      .prepare(`SELECT * FROM compaction_checkpoints WHERE anchor_response_id IN (SELECT value FROM json_each(?)) ORDER BY created_at, rowid`)
      .all(JSON.stringify(chain)) as CheckpointRow[];
    return deepestOnChain(rows, chain);
  }

  /**
   * Stores a checkpoint, deletes the one it supersedes and marks the
   * summarised turns inactive, in one transaction. Turns keep every byte of
   * every carrier; only their flag changes.
   */
  async save(checkpoint: NewCheckpoint, archive: CheckpointArchive): Promise<Checkpoint> {
    this.settle();
    return this.db.transaction(() => {
      const now = new Date().toISOString();
      this.db
        .prepare(`INSERT OR IGNORE INTO sessions (id, key_hash, model, parent_id, model_config, created_at, updated_at) VALUES (?, ?, ?, NULL, '{}', ?, ?)`)
        .run(checkpoint.sessionId, archive.owner.keyHash, archive.owner.model, now, now);
      this.db
        .prepare(`UPDATE turns SET active = 0 WHERE session_id = ? AND id IN (SELECT value FROM json_each(?))`)
        .run(checkpoint.sessionId, JSON.stringify(archive.turnIds));
      const archived = this.db
        .prepare(`SELECT COUNT(*) AS count, MAX(position) AS through FROM turns WHERE session_id = ? AND active = 0`)
        .get(checkpoint.sessionId) as { count: number; through: number | null };
      if (archive.supersedes) this.db.prepare(`DELETE FROM compaction_checkpoints WHERE id = ?`).run(archive.supersedes.id);
      const stored: Checkpoint = { ...checkpoint, archivedTurns: archived.count, archivedThrough: archived.through, createdAt: new Date().toISOString() };
      this.insert(stored);
      return stored;
    })();
  }

  /** A session's checkpoints, oldest first. */
  list(sessionId: string): Checkpoint[] {
    return (this.ofSession.all(sessionId) as CheckpointRow[]).map(toCheckpoint);
  }

  insert(checkpoint: Checkpoint): void {
    this.db
      .prepare(`INSERT INTO compaction_checkpoints (${CHECKPOINT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
      .run(checkpointValues(checkpoint));
  }
}

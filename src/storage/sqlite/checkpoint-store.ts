import { randomBytes } from "node:crypto";
import type { Checkpoint, CheckpointArchive, NewCheckpoint } from "../checkpoints.js";
import type { Db } from "./database.js";

interface CheckpointRow {
  id: string;
  session_id: string;
  anchor_response_id: string | null;
  head_count: number;
  cut_index: number;
  summary: string;
  summarizer: string;
  summarized_messages: number;
  archived_turns: number;
  archived_through: number | null;
  tokens_before: number;
  tokens_after: number;
  created_at: string;
}

/**
 * Checkpoints and the active flag of turns (migration 200). `settle` first
 * commits turns made durable but not committed yet: a checkpoint archives
 * turns by id.
 */
export class CheckpointStore {
  constructor(
    private readonly db: Db,
    private readonly settle: () => void,
  ) {}

  /** An id for a checkpoint made here (a branch's copy); the same shape as the ones compaction makes. */
  newCheckpointId(): string {
    return `ckpt_${randomBytes(12).toString("hex")}`;
  }

  /** Whether a session has any checkpoint: most have none, and then the chain need not be walked. */
  has(sessionId: string): boolean {
    return this.db.prepare("SELECT 1 FROM compaction_checkpoints WHERE session_id = ? LIMIT 1").get(sessionId) !== undefined;
  }

  /** The checkpoint in force for a chain (response ids, oldest first): the one anchored deepest, newest on a tie. */
  forChain(chain: readonly string[]): Checkpoint | undefined {
    if (chain.length === 0) return undefined;
    const rows = this.db
      .prepare(`SELECT * FROM compaction_checkpoints WHERE anchor_response_id IN (SELECT value FROM json_each(?)) ORDER BY created_at, rowid`)
      .all(JSON.stringify(chain)) as CheckpointRow[];
    const depth = new Map(chain.map((id, index) => [id, index]));
    let best: CheckpointRow | undefined;
    for (const row of rows) if (!best || depth.get(row.anchor_response_id!)! >= depth.get(best.anchor_response_id!)!) best = row;
    return best ? toCheckpoint(best) : undefined;
  }

  /**
   * Stores a checkpoint, deletes the one it supersedes and marks the
   * summarised turns inactive, in one transaction. Turns keep every byte of
   * every carrier; only their flag changes.
   */
  save(checkpoint: NewCheckpoint, archive: CheckpointArchive): Checkpoint {
    this.settle();
    return this.db.transaction(() => {
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
    return (this.db.prepare(`SELECT * FROM compaction_checkpoints WHERE session_id = ? ORDER BY created_at, rowid`).all(sessionId) as CheckpointRow[]).map(
      toCheckpoint,
    );
  }

  /** Positions of a session's inactive (summarised) turns. */
  archivedPositions(sessionId: string): Set<number> {
    return new Set(
      (this.db.prepare(`SELECT position FROM turns WHERE session_id = ? AND active = 0`).all(sessionId) as { position: number }[]).map((row) => row.position),
    );
  }

  insert(checkpoint: Checkpoint): void {
    this.db
      .prepare(
        `INSERT INTO compaction_checkpoints (id, session_id, anchor_response_id, head_count, cut_index, summary, summarizer, summarized_messages, archived_turns, archived_through, tokens_before, tokens_after, created_at)
         VALUES (@id, @sessionId, @anchorResponseId, @headCount, @cutIndex, @summary, @summarizer, @summarizedMessages, @archivedTurns, @archivedThrough, @tokensBefore, @tokensAfter, @createdAt)`,
      )
      .run(checkpoint);
  }
}

function toCheckpoint(row: CheckpointRow): Checkpoint {
  return {
    id: row.id,
    sessionId: row.session_id,
    anchorResponseId: row.anchor_response_id,
    headCount: row.head_count,
    cutIndex: row.cut_index,
    summary: row.summary,
    summarizer: row.summarizer,
    summarizedMessages: row.summarized_messages,
    archivedTurns: row.archived_turns,
    archivedThrough: row.archived_through,
    tokensBefore: row.tokens_before,
    tokensAfter: row.tokens_after,
    createdAt: row.created_at,
  };
}

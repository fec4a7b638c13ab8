import { randomBytes } from "node:crypto";
import type { Checkpoint, CheckpointArchive, NewCheckpoint } from "../checkpoints.js";
import type { CheckpointStorage } from "../storage.js";
import type { Sql } from "./connection.js";
import { run, transaction, type Runner } from "./run.js";

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

const COLUMNS = `id, session_id, anchor_response_id, head_count, cut_index, summary, summarizer, summarized_messages, archived_turns, archived_through, tokens_before, tokens_after, created_at`;
const HAS = `SELECT 1 FROM compaction_checkpoints WHERE session_id = $1 LIMIT 1`;
const FOR_ANCHORS = `SELECT ${COLUMNS} FROM compaction_checkpoints WHERE anchor_response_id = ANY($1::text[]) ORDER BY created_at, ord`;
const OF_SESSION = `SELECT ${COLUMNS} FROM compaction_checkpoints WHERE session_id = $1 ORDER BY created_at, ord`;
const NEWEST_OF_SESSION = `SELECT ${COLUMNS} FROM compaction_checkpoints WHERE session_id = $1 ORDER BY created_at DESC, ord DESC LIMIT 1`;
const ARCHIVE_TURNS = `UPDATE turns SET active = 0 WHERE session_id = $1 AND id = ANY($2::text[])`;
const ARCHIVED = `SELECT COUNT(*)::int AS count, MAX(position) AS through FROM turns WHERE session_id = $1 AND active = 0`;
const DELETE = `DELETE FROM compaction_checkpoints WHERE id = $1`;
const ARCHIVED_POSITIONS = `SELECT position FROM turns WHERE session_id = $1 AND active = 0`;
const INSERT = `INSERT INTO compaction_checkpoints (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`;

/** Compaction's checkpoints and the active flag of turns, in PostgreSQL. */
export class PgCheckpoints implements CheckpointStorage {
  constructor(private readonly sql: Sql) {}

  async has(sessionId: string): Promise<boolean> {
    return (await run(this.sql, HAS, [sessionId])).length > 0;
  }

  async forChain(chain: readonly string[]): Promise<Checkpoint | undefined> {
    if (chain.length === 0) return undefined;
    const rows = await run<CheckpointRow>(this.sql, FOR_ANCHORS, [[...chain]]);
    const depth = new Map(chain.map((id, index) => [id, index]));
    let best: CheckpointRow | undefined;
    for (const row of rows) if (!best || depth.get(row.anchor_response_id!)! >= depth.get(best.anchor_response_id!)!) best = row;
    return best ? toCheckpoint(best) : undefined;
  }

  async save(checkpoint: NewCheckpoint, archive: CheckpointArchive): Promise<Checkpoint> {
    return transaction(this.sql, async (tx) => {
      await run(tx, ARCHIVE_TURNS, [checkpoint.sessionId, [...archive.turnIds]]);
      const [archived] = await run<{ count: number; through: number | null }>(tx, ARCHIVED, [checkpoint.sessionId]);
      if (archive.supersedes) await run(tx, DELETE, [archive.supersedes.id]);
      const stored: Checkpoint = { ...checkpoint, archivedTurns: archived.count, archivedThrough: archived.through, createdAt: new Date().toISOString() };
      await insertCheckpoint(tx, stored);
      return stored;
    });
  }

  async list(sessionId: string): Promise<Checkpoint[]> {
    return (await run<CheckpointRow>(this.sql, OF_SESSION, [sessionId])).map(toCheckpoint);
  }

  async archivedPositions(sessionId: string): Promise<Set<number>> {
    return new Set((await run<{ position: number }>(this.sql, ARCHIVED_POSITIONS, [sessionId])).map((row) => row.position));
  }
}

/** An id for a checkpoint made by the store itself (a branch's copy); the shape compaction gives its own. */
export function newCheckpointId(): string {
  return `ckpt_${randomBytes(12).toString("hex")}`;
}

export async function newestCheckpoint(on: Runner, sessionId: string): Promise<Checkpoint | undefined> {
  const [row] = await run<CheckpointRow>(on, NEWEST_OF_SESSION, [sessionId]);
  return row ? toCheckpoint(row) : undefined;
}

export async function insertCheckpoint(on: Runner, checkpoint: Checkpoint): Promise<void> {
  await run(on, INSERT, [
    checkpoint.id,
    checkpoint.sessionId,
    checkpoint.anchorResponseId,
    checkpoint.headCount,
    checkpoint.cutIndex,
    checkpoint.summary,
    checkpoint.summarizer,
    checkpoint.summarizedMessages,
    checkpoint.archivedTurns,
    checkpoint.archivedThrough,
    checkpoint.tokensBefore,
    checkpoint.tokensAfter,
    checkpoint.createdAt,
  ]);
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

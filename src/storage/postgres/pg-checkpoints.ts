import { randomBytes } from "node:crypto";
import type { Checkpoint, CheckpointArchive, NewCheckpoint } from "../checkpoints.js";
import { CHECKPOINT_COLUMNS, checkpointValues, deepestOnChain, toCheckpoint, type CheckpointRow } from "../rows.js";
import type { CheckpointStorage } from "../storage.js";
import type { Sql } from "./connection.js";
import { run, transaction, type Runner } from "./run.js";

const COLUMNS = CHECKPOINT_COLUMNS;
const HAS = `SELECT 1 FROM compaction_checkpoints WHERE session_id = $1 LIMIT 1`;
const FOR_ANCHORS = `SELECT ${COLUMNS} FROM compaction_checkpoints WHERE anchor_response_id = ANY($1::text[]) ORDER BY created_at, ord`;
const OF_SESSION = `SELECT ${COLUMNS} FROM compaction_checkpoints WHERE session_id = $1 ORDER BY created_at, ord`;
const NEWEST_OF_SESSION = `SELECT ${COLUMNS} FROM compaction_checkpoints WHERE session_id = $1 ORDER BY created_at DESC, ord DESC LIMIT 1`;
const ARCHIVE_TURNS = `UPDATE turns SET active = 0 WHERE session_id = $1 AND id = ANY($2::text[])`;
const ARCHIVED = `SELECT COUNT(*)::int AS count, MAX(position) AS through FROM turns WHERE session_id = $1 AND active = 0`;
const DELETE = `DELETE FROM compaction_checkpoints WHERE id = $1`;
const ENSURE_SESSION = `INSERT INTO sessions (id, key_hash, model, parent_id, model_config, created_at, updated_at) VALUES ($1, $2, $3, NULL, '{}', $4, $4) ON CONFLICT (id) DO NOTHING`;
const ANCESTRY = `
  WITH RECURSIVE chain(id, parent_id, depth) AS (
    SELECT id, parent_id, 0 FROM responses WHERE id = $1
    UNION ALL
    SELECT r.id, r.parent_id, chain.depth + 1 FROM responses r JOIN chain ON r.id = chain.parent_id
  )
  SELECT id FROM chain ORDER BY depth DESC`;
const INSERT = `INSERT INTO compaction_checkpoints (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`;

/**
 * The checkpoint in force for a request of `sessionId` continuing response
 * `parentId`: of those anchored on the chain ending there, the one anchored
 * deepest, newest on a tie. Most sessions have none, and then the chain is
 * not walked. Answered with a chain's history (PgResponses.get).
 */
export async function checkpointInForce(sql: Sql, sessionId: string, parentId: string): Promise<Checkpoint | undefined> {
  if ((await run(sql, HAS, [sessionId])).length === 0) return undefined;
  const chain = (await run<{ id: string }>(sql, ANCESTRY, [parentId])).map((row) => row.id);
  if (chain.length === 0) return undefined;
  return deepestOnChain(await run<CheckpointRow>(sql, FOR_ANCHORS, [chain]), chain);
}

/** Compaction's checkpoints and the active flag of turns, in PostgreSQL. */
export class PgCheckpoints implements CheckpointStorage {
  constructor(private readonly sql: Sql) {}

  async save(checkpoint: NewCheckpoint, archive: CheckpointArchive): Promise<Checkpoint> {
    return transaction(this.sql, async (tx) => {
      await run(tx, ENSURE_SESSION, [checkpoint.sessionId, archive.owner.keyHash, archive.owner.model, new Date().toISOString()]);
      await run(tx, ARCHIVE_TURNS, [checkpoint.sessionId, [...archive.turnIds]]);
      const [archived] = await run<{ count: number; through: number | null }>(tx, ARCHIVED, [checkpoint.sessionId]);
      if (archive.supersedes) await run(tx, DELETE, [archive.supersedes.id]);
      const stored: Checkpoint = { ...checkpoint, archivedTurns: archived.count, archivedThrough: archived.through, createdAt: new Date().toISOString() };
      await insertCheckpoint(tx, stored);
      return stored;
    });
  }
}

/** A session's checkpoints, oldest first. */
export async function checkpointsOf(on: Runner, sessionId: string): Promise<Checkpoint[]> {
  return (await run<CheckpointRow>(on, OF_SESSION, [sessionId])).map(toCheckpoint);
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
  await run(on, INSERT, checkpointValues(checkpoint));
}

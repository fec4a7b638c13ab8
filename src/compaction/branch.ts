import { newId } from "../chat/session-id.js";
import type { Db } from "../store/database.js";
import type { SessionStore } from "../store/session-store.js";
import { CheckpointStore } from "./checkpoint-store.js";

/**
 * `sessions branch ID --at N` that knows about compaction. The turns are
 * copied by SessionStore.branch (every carrier copied in SQL, byte for
 * byte, fingerprints included); then, when N lies past the session's
 * newest checkpoint, the copies of archived turns are dropped and the
 * checkpoint is copied in their place — the branch holds what the session
 * sends upstream: the active turns and the summary. When N lies inside or
 * before the summarised range, the branch is the session as it stood at
 * turn N, every turn active. Either way the branch shares no row with its
 * parent, so later compactions of one never touch the other.
 */
export function branchSession(db: Db, sessions: SessionStore, sourceId: string, at: number | undefined): { id: string; turns: number; checkpoint: string | undefined } {
  const checkpoints = new CheckpointStore(db);
  const branchId = newId("sess_");
  if (!checkpoints.ready) return { id: branchId, turns: sessions.branch(sourceId, branchId, at), checkpoint: undefined };
  return db.transaction(() => {
    let turns = sessions.branch(sourceId, branchId, at);
    const newest = checkpoints.list(sourceId).at(-1);
    const limit = at ?? Number.MAX_SAFE_INTEGER;
    if (!newest || newest.archivedThrough === null || limit <= newest.archivedThrough) return { id: branchId, turns, checkpoint: undefined };
    turns -= db
      .prepare(`DELETE FROM turns WHERE session_id = ? AND position IN (SELECT position FROM turns WHERE session_id = ? AND active = 0 AND position <= ?)`)
      .run(branchId, sourceId, limit).changes;
    // each copied turn follows the one before it in the branch, across the gap the archived turns left
    db.prepare(
      `UPDATE turns SET parent_turn_id = (SELECT p.id FROM turns p WHERE p.session_id = turns.session_id AND p.position < turns.position ORDER BY p.position DESC LIMIT 1) WHERE session_id = ?`,
    ).run(branchId);
    const copy = { ...newest, id: newId("ckpt_"), sessionId: branchId, anchorResponseId: null, createdAt: new Date().toISOString() };
    checkpoints.insert(copy);
    return { id: branchId, turns, checkpoint: copy.id };
  })();
}

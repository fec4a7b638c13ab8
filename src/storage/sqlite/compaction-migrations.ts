import type { Migration } from "./database.js";

/**
 * Compaction (versions 200–299; docs/compaction.md).
 *
 * Turns are never deleted by compaction: the summarised ones are marked
 * inactive (`turns.active = 0`) so `sessions show --all` still shows them and
 * replay can still find their carriers if an older fork of the chain needs
 * them. A checkpoint holds the summary and where it sits: for a Responses
 * chain, `head_count` messages of the chain's history are kept, then the
 * summary, then the history from `cut_index` on — valid for every chain
 * that passes through `anchor_response_id`, whose history prefix is fixed.
 * Only a checkpoint superseded by a newer one on the same chain is deleted.
 */
export const COMPACTION_MIGRATIONS: readonly Migration[] = [
  {
    version: 200,
    name: "compaction checkpoints, active turns",
    sql: `
      ALTER TABLE turns ADD COLUMN active INTEGER NOT NULL DEFAULT 1;
      CREATE TABLE compaction_checkpoints (
        id                 TEXT PRIMARY KEY,
        session_id         TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        -- the response the summarised history ran up to; NULL for a copy in a branch
        anchor_response_id TEXT,
        head_count         INTEGER NOT NULL,
        cut_index          INTEGER NOT NULL,
        summary            TEXT NOT NULL,
        summarizer         TEXT NOT NULL,
        -- counts and sizes only (what the log and the event report)
        summarized_messages INTEGER NOT NULL,
        archived_turns     INTEGER NOT NULL,
        archived_through   INTEGER,
        tokens_before      INTEGER NOT NULL,
        tokens_after       INTEGER NOT NULL,
        created_at         TEXT NOT NULL
      );
      CREATE INDEX compaction_checkpoints_session ON compaction_checkpoints (session_id, created_at);
    `,
  },
  {
    version: 201,
    // the checkpoint in force for a chain is read by its anchors on the request path: by index, not by reading them all
    name: "checkpoints found by their anchor",
    sql: "CREATE INDEX compaction_checkpoints_anchor ON compaction_checkpoints (anchor_response_id);",
  },
];

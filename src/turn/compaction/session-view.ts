import type { Checkpoint } from "../../storage/checkpoints.js";

/** `sessions show --json`: a checkpoint's summary and sizes. */
export function checkpointJson(checkpoint: Checkpoint): object {
  return {
    id: checkpoint.id,
    response_id: checkpoint.anchorResponseId,
    summarizer: checkpoint.summarizer,
    summarized_messages: checkpoint.summarizedMessages,
    archived_turns: checkpoint.archivedTurns,
    archived_through: checkpoint.archivedThrough,
    tokens_before: checkpoint.tokensBefore,
    tokens_after: checkpoint.tokensAfter,
    created_at: checkpoint.createdAt,
    summary: checkpoint.summary,
  };
}

/** `sessions show`: one line where the summary sits. */
export function checkpointLine(checkpoint: Checkpoint): string {
  const through = checkpoint.archivedThrough === null ? "" : ` up to #${checkpoint.archivedThrough}`;
  return `  ~ checkpoint ${checkpoint.id}: summary by ${checkpoint.summarizer} of ${checkpoint.archivedTurns} archived turn(s)${through} (${checkpoint.summary.length} chars; ~${checkpoint.tokensBefore} → ~${checkpoint.tokensAfter} tokens)`;
}

/** A checkpoint: the summary that stands in for the middle of a session's history. */
export interface Checkpoint {
  readonly id: string;
  readonly sessionId: string;
  /** The response whose chain the summary was made on; null for a copy in a branch. */
  readonly anchorResponseId: string | null;
  /** Messages of the chain's history kept before the summary (system and first user message). */
  readonly headCount: number;
  /** Index in the chain's full history of the first message kept after the summary. */
  readonly cutIndex: number;
  readonly summary: string;
  /** The model name the summary was asked of. */
  readonly summarizer: string;
  /** Messages the summary replaced, this compaction alone. */
  readonly summarizedMessages: number;
  /** Turns of the session inactive under this checkpoint (earlier compactions included). */
  readonly archivedTurns: number;
  /** Position of the last archived turn. */
  readonly archivedThrough: number | null;
  readonly tokensBefore: number;
  readonly tokensAfter: number;
  readonly createdAt: string;
}

/** A checkpoint as compaction writes it: the store counts what it archives and stamps it. */
export type NewCheckpoint = Omit<Checkpoint, "archivedTurns" | "archivedThrough" | "createdAt">;

/** What a new checkpoint archives: the summarised turns, and the checkpoint it replaces. */
export interface CheckpointArchive {
  readonly turnIds: readonly string[];
  readonly supersedes: Checkpoint | undefined;
  /** The session's key hash and model, for its row when it is gone (`sessions rm`) while its response chain lives on. */
  readonly owner: { readonly keyHash: string; readonly model: string };
}

import type { Checkpoint } from "./checkpoints.js";
import type { ChatMessage } from "../providers/contract.js";
import type { TurnAudit } from "./session-history.js";
import type { SessionModelConfig, StoredTurn } from "./turns.js";

/**
 * The sessions an operator lists, shows, branches and removes, as the CLI
 * (`sessions`, `chat --resume`) and session history over HTTP
 * (docs/api.md#session-history) read them: one shape for both, each caller
 * takes what it shows.
 */

/** Which sessions `SessionStorage.list` answers. Times are ISO 8601 UTC strings, as the store keeps them. */
export interface SessionQuery {
  readonly limit: number;
  /** Only sessions filed under this key's data scope; undefined: every key's (the owner key, the CLI). */
  readonly keyHash?: string;
  /** The last session of the page before: this page starts after it in the order. */
  readonly after?: { readonly updatedAt: string; readonly id: string };
  /** Sessions with a turn for this model (the name the client asked for). */
  readonly model?: string;
  /** Sessions with a turn served by this provider. */
  readonly provider?: string;
  /** Last activity at or after this moment. */
  readonly since?: string;
  /** Last activity before this moment. */
  readonly until?: string;
  /** Sessions where a user message or an assistant answer contains this text, both sides lower-cased by the backend (SQLite: ASCII letters only). */
  readonly text?: string;
  /** When the search gives up (ms since the epoch): past it the backend stops reading and the list rejects with ListDeadlineError. */
  readonly deadline?: number;
}

/** A list that ran past its query's deadline: it was stopped, its work is undone, nothing was read. */
export class ListDeadlineError extends Error {
  constructor() {
    super("the session list ran past its deadline");
    this.name = "ListDeadlineError";
  }
}

/** A session as a list shows it. */
export interface SessionSummary {
  /** The stored id (an access key's: `name~scope`). */
  readonly id: string;
  /** The data scope of the key that created it. */
  readonly keyHash: string;
  /** The newest turn's model (or the session's own, without turns). */
  readonly model: string | null;
  /** The newest turn's provider; null without turns. */
  readonly provider: string | null;
  readonly parentId: string | null;
  /** How many turns it holds. */
  readonly turns: number;
  readonly createdAt: string;
  /** Its newest turn's time, or its own for a session without turns. */
  readonly updatedAt: string;
  /** The prompt (JSON of messages, as stored) of its first turn; null without turns. */
  readonly firstPrompt: string | null;
}

/** A session with its model config, every turn with the prompt that asked for it, and its compaction. */
export interface SessionDetail extends SessionSummary {
  readonly modelConfig: SessionModelConfig;
  /** Oldest first. */
  readonly turnList: SessionTurn[];
  /** Per turn, in order: the messages that asked for it. */
  readonly prompts: ChatMessage[][];
  /** What compaction archived of it. */
  readonly compaction: SessionCompaction;
}

/** A stored turn as a session shows it: the turn, its depth, what the gateway decided for it and which carriers it holds. */
export interface SessionTurn extends StoredTurn {
  /** Its depth in the conversation it continues (NewTurn.depth; its position when stored without). */
  readonly depth: number;
  /** Its route, timings and replay decision; undefined for turns stored before they were recorded, and a branch's copies. */
  readonly audit: TurnAudit | undefined;
  /** What it holds to replay, by kind and stored size, never the bytes. */
  readonly carriers: StoredCarrier[];
}

/** One kind of carrier a turn holds; `bytes` are UTF-8 bytes of the stored text (for extra_content: of each call's, summed). */
export type StoredCarrier =
  | { readonly kind: "reasoning_text"; readonly bytes: number }
  | { readonly kind: "reasoning_details"; readonly items: number; readonly bytes: number; readonly types: string[] }
  | { readonly kind: "native_record"; readonly bytes: number; readonly type?: string }
  | { readonly kind: "extra_content"; readonly items: number; readonly bytes: number };

/** What compaction archived of a session. */
export interface SessionCompaction {
  /** Positions of archived (inactive) turns. */
  readonly archived: ReadonlySet<number>;
  /** The session's checkpoints, oldest first (normally one: a newer one removes the one it supersedes). */
  readonly checkpoints: readonly Checkpoint[];
}

/** What `sessions branch` made: the new session, how many turns it holds, and the checkpoint copied into it, if any. */
export interface BranchResult {
  readonly id: string;
  readonly turns: number;
  readonly checkpoint: string | undefined;
}

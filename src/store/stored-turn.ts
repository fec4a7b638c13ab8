import type { ChatMessage, Json, JsonObject, ToolCall, Usage } from "../plugins/contract.js";

/** A stored assistant turn as replay, the CLI and branching read it. */
export interface StoredTurn {
  readonly seq: number;
  readonly id: string;
  readonly sessionId: string;
  readonly position: number;
  readonly parentTurnId: string | null;
  /** The model name the client asked for. */
  readonly model: string;
  readonly plugin: string;
  readonly provider: string;
  readonly host: string;
  readonly upstreamModel: string;
  readonly content: string;
  readonly toolCalls: ToolCall[];
  /** The one plain reasoning text (SPEC §12.1); "" when the turn had none. */
  readonly reasoningText: string;
  /** Verbatim, as the provider returns it non-streamed (SPEC §12.2). */
  readonly reasoningDetails: Json[] | undefined;
  readonly nativeRecord: JsonObject | undefined;
  readonly usage: Usage | undefined;
  readonly finishReason: string | null;
  readonly upstreamId: string | null;
  readonly createdAt: string;
}

/** What replay needs of a stored turn: only the carriers and who produced them. */
export interface ReplaySource {
  readonly id: string;
  readonly sessionId: string;
  readonly plugin: string;
  readonly upstreamModel: string;
  readonly reasoningText: string;
  readonly reasoningDetails: Json[] | undefined;
  readonly nativeRecord: JsonObject | undefined;
}

/** Everything needed to write one completed turn. */
export interface NewTurn {
  readonly id: string;
  readonly sessionId: string;
  readonly keyHash: string;
  readonly parentTurnId: string | undefined;
  readonly model: string;
  readonly plugin: string;
  readonly provider: string;
  readonly host: string;
  readonly upstreamModel: string;
  /** The request messages after the last assistant message: what asked for this turn. */
  readonly prompt: readonly ChatMessage[];
  readonly content: string;
  readonly toolCalls: readonly ToolCall[];
  readonly reasoningText: string;
  readonly reasoningDetails: readonly Json[] | undefined;
  readonly nativeRecord: JsonObject | undefined;
  readonly usage: Usage | undefined;
  readonly finishReason: string;
  readonly upstreamId: string | undefined;
  readonly fingerprint: string;
}

/** A session as `sessions list` shows it. */
export interface SessionSummary {
  readonly id: string;
  readonly model: string | null;
  readonly parentId: string | null;
  readonly turns: number;
  readonly createdAt: string;
  readonly updatedAt: string;
}

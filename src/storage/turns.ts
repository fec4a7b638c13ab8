import type { ChatMessage, Json, JsonObject, ToolCall, Usage } from "../providers/contract.js";
import type { TurnAudit } from "./session-history.js";

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
  /** The one plain reasoning text; "" when the turn had none. */
  readonly reasoningText: string;
  /** Verbatim, as the provider returns it non-streamed. */
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
  /**
   * Its depth in the conversation it continues: the request's assistant
   * messages plus one, what position matching finds it by. Absent: its
   * position in the session.
   */
  readonly depth?: number;
  /** Its route, timings and replay decision (docs/api.md#session-history); absent for a turn written without one. */
  readonly audit?: TurnAudit;
}

/** A stored turn one of a request's keys (fingerprint or call key) matched. */
export interface FingerprintMatch {
  readonly id: string;
  readonly session_id: string;
  /** The turn it continued (the one before it in its conversation): how matching follows a conversation's order. */
  readonly parent_turn_id: string | null;
}

/** A depth position matching asks for, with what the request sent before its message there (RequestLookup-style JSON). */
export interface DepthAsked {
  readonly depth: number;
  /** JSON of the messages between the request's previous assistant message and this one: a stored turn's `prompt`. */
  readonly prompt: string;
}

/** A turn at an asked depth, and whether it was asked for by the same messages the request sends before that depth. */
export interface DepthMatch extends FingerprintMatch {
  readonly samePrompt: boolean;
}

/** A session's model config: verdicts recorded while it ran, so `--resume` keeps them. */
export interface SessionModelConfig {
  /** `[provider, host, model, fields]` */
  rejected_carriers?: [string, string, string, string[]][];
  [key: string]: unknown;
}

import { storedPromptSql } from "./prompt-heads.js";

/**
 * Session history as operators read it over HTTP (docs/api.md#session-history):
 * sessions paged and filtered, and one session's turns with everything the
 * gateway recorded about them. Read-only; a session is removed through the
 * catalogue (SessionCatalogue.remove).
 */
export interface SessionHistory {
  /** Sessions, most recently active first (ties: id descending), from `query.after` on; at most `query.limit`. */
  page(query: SessionQuery): Promise<HistorySession[]>;
  /** The session and its turns, oldest first; undefined when there is none of this stored id. */
  session(sessionId: string): Promise<{ session: HistorySession; turns: HistoryTurn[] } | undefined>;
}

/** Which sessions a page holds. Times are ISO 8601 UTC strings, as the store keeps them. */
export interface SessionQuery {
  /** Only sessions filed under this key's data scope; undefined: every key's (the owner key). */
  readonly keyHash: string | undefined;
  readonly limit: number;
  /** The last session of the page before: this page starts after it in the order. */
  readonly after: { readonly updatedAt: string; readonly id: string } | undefined;
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
}

/** A session as history lists it. */
export interface HistorySession {
  /** The stored id (an access key's: `name~scope`). */
  readonly id: string;
  /** The data scope of the key that created it. */
  readonly keyHash: string;
  /** The newest turn's model (or the session's own, without turns). */
  readonly model: string | null;
  /** The newest turn's provider; null without turns. */
  readonly provider: string | null;
  readonly parentId: string | null;
  readonly turnCount: number;
  readonly createdAt: string;
  /** Its newest turn's time, or its own for a session without turns. */
  readonly updatedAt: string;
  /** The prompt (JSON of messages) of its first turn; null without turns. */
  readonly firstPrompt: string | null;
}

/**
 * One stored turn as history shows it: the JSON columns as the store holds
 * them (text), so sizes are the stored ones and nothing is parsed that the
 * reader does not show.
 */
export interface HistoryTurn {
  readonly id: string;
  readonly position: number;
  readonly depth: number;
  readonly parentTurnId: string | null;
  readonly createdAt: string;
  readonly model: string;
  readonly plugin: string;
  readonly provider: string;
  readonly host: string;
  readonly upstreamModel: string;
  readonly upstreamId: string | null;
  readonly finishReason: string | null;
  /** JSON texts, null when the turn had none. */
  readonly prompt: string;
  readonly content: string;
  readonly toolCalls: string | null;
  readonly reasoningText: string;
  readonly reasoningDetails: string | null;
  readonly nativeRecord: string | null;
  readonly usage: string | null;
  /** JSON of its TurnAudit; null for turns stored before it was recorded, and a branch's copies. */
  readonly audit: string | null;
}

/**
 * What the gateway decided and measured for one turn, stored with it
 * (NewTurn.audit): its route, its timings, and what replay sent upstream.
 * Names and numbers only, never a carrier's bytes.
 */
export interface TurnAudit {
  /** The carrier route in force, numbered from 1 in routes.yaml order; 0: none matched (routeNumber). */
  readonly route: number;
  readonly timings: TurnTimings;
  readonly replay: ReplayDecision;
}

/** Milliseconds from the moment the answered call went upstream. */
export interface TurnTimings {
  readonly upstream_ms: number;
  readonly first_reasoning_ms: number | null;
  readonly first_content_ms: number | null;
  readonly total_ms: number;
}

/** How a request's assistant message was found in the store (docs/sessions-and-replay.md#how-a-request-finds-its-session). */
export type MatchKey = "fingerprint" | "call_id" | "depth" | "elsewhere" | "envelope";

/** Why a route's field did not go upstream. */
export type LeftOutBy = "verdict" | "rejected" | "opt_out";

/**
 * As stored: one entry per assistant message of the request, so a turn's
 * decision grows with its history; entries are tuples, and an attachment
 * names its turn only when that is not the message's matched turn. The
 * verdict's key of a left-out field is the turn's own provider, host and
 * upstream model. docs/api.md#get-v1sessionsid shows it expanded.
 */
export interface ReplayDecision {
  /** The fields the answered call could carry. */
  readonly effective: readonly string[];
  /** Per known assistant message: [index in the request's messages, the stored turn, the key that found it]. */
  readonly matched: readonly (readonly [message: number, turnId: string, by: MatchKey])[];
  /** The fields each message carried upstream: [message, fields], or [message, fields, turn] when not its matched turn (null: the client's own value). */
  readonly attached: readonly (readonly [message: number, fields: readonly string[], turnId?: string | null])[];
  /** Messages that got the must_echo placeholder. */
  readonly placeholders: readonly number[];
  /** Route fields that did not go upstream: [field, why]. */
  readonly left_out: readonly (readonly [field: string, by: LeftOutBy])[];
  /** Whether the answer came from the retry without a rejected field. */
  readonly retried: boolean;
}

/** A `turns` row as both backends read it for history (the columns HistoryTurn needs). */
export interface HistoryTurnRow {
  id: string;
  position: number;
  depth: number | null;
  parent_turn_id: string | null;
  created_at: string;
  model: string;
  plugin: string;
  provider: string;
  host: string;
  upstream_model: string;
  upstream_id: string | null;
  finish_reason: string | null;
  prompt: string;
  content: string;
  tool_calls: string | null;
  reasoning_text: string | null;
  reasoning_details: string | null;
  native_record: string | null;
  usage: string | null;
  audit: string | null;
}

/** The columns HistoryTurnRow names, for a SELECT of either backend. */
export const HISTORY_TURN_COLUMNS = `id, position, depth, parent_turn_id, created_at, model, plugin, provider, host, upstream_model, upstream_id, finish_reason,
  ${storedPromptSql("turns")} AS prompt, content, tool_calls, reasoning_text, reasoning_details, native_record, usage, audit`;

export function toHistoryTurn(row: HistoryTurnRow): HistoryTurn {
  return {
    id: row.id,
    position: row.position,
    depth: row.depth ?? row.position,
    parentTurnId: row.parent_turn_id,
    createdAt: row.created_at,
    model: row.model,
    plugin: row.plugin,
    provider: row.provider,
    host: row.host,
    upstreamModel: row.upstream_model,
    upstreamId: row.upstream_id,
    finishReason: row.finish_reason,
    prompt: row.prompt,
    content: row.content,
    toolCalls: row.tool_calls,
    reasoningText: row.reasoning_text ?? "",
    reasoningDetails: row.reasoning_details,
    nativeRecord: row.native_record,
    usage: row.usage,
    audit: row.audit,
  };
}

/** A session row as both backends read it for history. */
export interface HistorySessionRow {
  id: string;
  key_hash: string;
  model: string | null;
  provider: string | null;
  parent_id: string | null;
  turn_count: number | string;
  created_at: string;
  updated_at: string;
  first_prompt: string | null;
}

export function toHistorySession(row: HistorySessionRow): HistorySession {
  return {
    id: row.id,
    keyHash: row.key_hash,
    model: row.model,
    provider: row.provider,
    parentId: row.parent_id,
    turnCount: Number(row.turn_count),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    firstPrompt: row.first_prompt,
  };
}

import type { ChatMessage, Json, JsonObject } from "../providers/contract.js";
import type { Checkpoint } from "./checkpoints.js";
import { splitPrompt, storedPromptSql, type PromptColumns } from "./prompt-heads.js";
import type { KeyScope, StoredKey } from "./keys.js";
import type { StoredConversation, StoredResponse } from "./responses.js";
import type { NewTurn, ReplaySource, SessionModelConfig } from "./turns.js";
import type { Rejection, VerdictField } from "./verdicts.js";

/*
 * The rows both backends read and write, and how they map to what the port
 * answers: a column is added here once, and SQLite and PostgreSQL follow.
 * Numbers a driver hands over as strings (PostgreSQL's bigint) are read
 * with Number(), which leaves SQLite's numbers as they are.
 */

/** A bigint column: a number from SQLite, a string from node-postgres. */
type BigInt = number | string;

/** A row of `turns` as read (TURN_ROW_COLUMNS). */
export interface TurnRow {
  seq: BigInt;
  id: string;
  session_id: string;
  position: number;
  parent_turn_id: string | null;
  model: string;
  plugin: string;
  provider: string;
  host: string;
  upstream_model: string;
  /** The prompt's JSON as it was asked for, its head (prompt-heads.ts) joined back by the SELECT (storedPromptSql). */
  prompt: string;
  content: string;
  tool_calls: string | null;
  reasoning_text: string | null;
  reasoning_details: string | null;
  native_record: string | null;
  usage: string | null;
  finish_reason: string | null;
  upstream_id: string | null;
  created_at: string;
  /** 0 once compaction archived it (smallint in both backends). */
  active: number;
  /** Null: its depth is its position. */
  depth: number | null;
  /** JSON of its TurnAudit; null when none was recorded. */
  audit: string | null;
}

/** The columns of TurnRow, for a SELECT of either backend (a turn's keys are not among them: nothing shows them). */
export const TURN_ROW_COLUMNS = `seq, id, session_id, position, parent_turn_id, model, plugin, provider, host, upstream_model,
  ${storedPromptSql("turns")} AS prompt, content, tool_calls,
  reasoning_text, reasoning_details, native_record, usage, finish_reason, upstream_id, created_at, active, depth, audit`;

/** The columns replay reads of a turn. */
export type ReplayRow = Pick<TurnRow, "id" | "session_id" | "plugin" | "upstream_model" | "reasoning_text" | "reasoning_details" | "native_record">;

/**
 * The columns a new turn is written with, in the order of turnValues.
 * `position` is not among them: it follows from the session's turns, and
 * each backend counts it its own way.
 */
export const TURN_COLUMNS = `id, session_id, parent_turn_id, model, plugin, provider, host, upstream_model, prompt, content, tool_calls,
  reasoning_text, reasoning_details, native_record, usage, finish_reason, upstream_id, created_at, key_hash, fingerprint, call_key, audit, prompt_head, depth`;

/** A new turn's columns that hold JSON, as written (turnValues): made once, for each place that needs them. */
export interface TurnJsonColumns {
  /** The prompt as stored (splitPrompt); its head, if any, is the backend's to write to prompt_heads with the turn. */
  readonly prompt: PromptColumns;
  /** Null when it made no tool calls. */
  readonly toolCalls: string | null;
  readonly reasoningDetails: string | null;
  readonly nativeRecord: string | null;
  readonly usage: string | null;
  readonly audit: string | null;
}

export function turnJsonColumns(turn: NewTurn, prompt: PromptColumns = splitPrompt(turn.prompt)): TurnJsonColumns {
  return {
    prompt,
    toolCalls: turn.toolCalls.length > 0 ? JSON.stringify(turn.toolCalls) : null,
    reasoningDetails: turn.reasoningDetails ? JSON.stringify(turn.reasoningDetails) : null,
    nativeRecord: turn.nativeRecord ? JSON.stringify(turn.nativeRecord) : null,
    usage: turn.usage ? JSON.stringify(turn.usage) : null,
    audit: turn.audit ? JSON.stringify(turn.audit) : null,
  };
}

/**
 * A new turn's values for TURN_COLUMNS (24); `depth` is null when it is the
 * turn's position. `callKey`: callKeyOf(turn.toolCalls), computed by the
 * backend (session matching sits above the port). `json`: its JSON
 * columns (turnJsonColumns).
 */
export function turnValues(turn: NewTurn, createdAt: string, callKey: string | undefined, json: TurnJsonColumns = turnJsonColumns(turn)): unknown[] {
  return [
    turn.id,
    turn.sessionId,
    turn.parentTurnId ?? null,
    turn.model,
    turn.plugin,
    turn.provider,
    turn.host,
    turn.upstreamModel,
    json.prompt.rest,
    turn.content,
    json.toolCalls,
    turn.reasoningText,
    json.reasoningDetails,
    json.nativeRecord,
    json.usage,
    turn.finishReason,
    turn.upstreamId ?? null,
    createdAt,
    turn.keyHash,
    turn.fingerprint,
    callKey ?? null,
    json.audit,
    json.prompt.head?.hash ?? null,
    turn.depth ?? null,
  ];
}

/** Characters of a turn's carrier columns, for the replay cache's size limit. */
export function carrierSize(...columns: (string | null)[]): number {
  return columns.reduce((sum, column) => sum + (column?.length ?? 0), 0);
}

export function toReplaySource(row: ReplayRow): ReplaySource {
  return {
    id: row.id,
    sessionId: row.session_id,
    plugin: row.plugin,
    upstreamModel: row.upstream_model,
    reasoningText: row.reasoning_text ?? "",
    reasoningDetails: parseJson<Json[]>(row.reasoning_details),
    nativeRecord: parseJson<JsonObject>(row.native_record),
  };
}

/** A row of `compaction_checkpoints`. */
export interface CheckpointRow {
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

/** The columns of a checkpoint, in the order of checkpointValues. */
export const CHECKPOINT_COLUMNS = `id, session_id, anchor_response_id, head_count, cut_index, summary, summarizer, summarized_messages, archived_turns, archived_through, tokens_before, tokens_after, created_at`;

export function checkpointValues(checkpoint: Checkpoint): unknown[] {
  return [
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
  ];
}

export function toCheckpoint(row: CheckpointRow): Checkpoint {
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

/** Of the checkpoints anchored on a chain (response ids, oldest first), the one anchored deepest; rows oldest first, so the newest wins a tie. */
export function deepestOnChain(rows: readonly CheckpointRow[], chain: readonly string[]): Checkpoint | undefined {
  const depth = new Map(chain.map((id, index) => [id, index]));
  let best: CheckpointRow | undefined;
  for (const row of rows) if (!best || depth.get(row.anchor_response_id!)! >= depth.get(best.anchor_response_id!)!) best = row;
  return best ? toCheckpoint(best) : undefined;
}

/** A row of `access_keys`. */
export interface KeyRow {
  name: string;
  secret_hash: string;
  data_scope: string;
  scopes: string;
  models: string;
  events_of: string;
  created_at: BigInt;
  expires_at: BigInt | null;
  revoked_at: BigInt | null;
  rotated_at: BigInt | null;
  last_used_at: BigInt | null;
  requests: BigInt;
}

const numberOr = (value: BigInt | null): number | null => (value === null ? null : Number(value));

export function toStoredKey(row: KeyRow): StoredKey {
  return {
    name: row.name,
    secretHash: row.secret_hash,
    dataScope: row.data_scope,
    scopes: JSON.parse(row.scopes) as KeyScope[],
    models: JSON.parse(row.models) as string[],
    eventsOf: JSON.parse(row.events_of) as string[],
    createdAt: Number(row.created_at),
    expiresAt: numberOr(row.expires_at),
    revokedAt: numberOr(row.revoked_at),
    rotatedAt: numberOr(row.rotated_at),
    lastUsedAt: numberOr(row.last_used_at),
    requests: Number(row.requests),
  };
}

/** A session's config with a rejection's fields added to those of its (provider, host, model). */
export function withRejection(config: SessionModelConfig, rejection: Rejection): SessionModelConfig {
  const isFor = (entry: [string, string, string, string[]]) => entry[0] === rejection.provider && entry[1] === rejection.host && entry[2] === rejection.model;
  const all = config.rejected_carriers ?? [];
  const previous = all.find(isFor)?.[3] ?? [];
  const fields = [...new Set([...previous, ...rejection.fields])].sort();
  return { ...config, rejected_carriers: [...all.filter((entry) => !isFor(entry)), [rejection.provider, rejection.host, rejection.model, fields]] };
}

/** A session's config (its column's text) without the rejections `predicate` selects; undefined when it holds none of them. */
export function withoutRejections(modelConfig: string, predicate: (verdict: VerdictField) => boolean): SessionModelConfig | undefined {
  const config = parseJson<SessionModelConfig>(modelConfig) ?? {};
  const before = JSON.stringify(config.rejected_carriers ?? []);
  config.rejected_carriers = (config.rejected_carriers ?? [])
    .map(
      ([provider, host, model, fields]) =>
        [provider, host, model, fields.filter((field) => !predicate({ provider, host, model, field }))] as [string, string, string, string[]],
    )
    .filter((entry) => entry[3].length > 0);
  return JSON.stringify(config.rejected_carriers) === before ? undefined : config;
}

/** A JSON column; undefined for NULL or text that does not parse. */
export function parseJson<T>(text: string | null | undefined): T | undefined {
  if (text === null || text === undefined) return undefined;
  try {
    return JSON.parse(text) as T;
  } catch {
    return undefined;
  }
}

/** A row of `responses` as a read selects it; `input_items` only when asked for, `messages` only on a walk of the chain. */
export interface ResponseRow {
  id: string;
  session_id: string;
  key_hash: string | null;
  body: string;
  input_items?: string | null;
  /** On a walk of the chain: each row's messages; rows before the last carry only these (their other columns are NULL). */
  messages?: string | null;
}

export function storedResponse(row: ResponseRow): StoredResponse {
  return { id: row.id, sessionId: row.session_id, keyHash: row.key_hash, body: JSON.parse(row.body) as JsonObject };
}

/** A retrievable response's input items: empty for one stored before they were kept. */
export function inputItemsOf(row: ResponseRow): JsonObject[] {
  return row.input_items ? (JSON.parse(row.input_items) as JsonObject[]) : [];
}

/** A response and its history from the chain walked up from it, oldest first (the last row is the response); undefined for no rows: not retrievable. */
export function withHistory(chain: readonly ResponseRow[]): StoredResponse | undefined {
  const self = chain.at(-1);
  return self && { ...storedResponse(self), history: chain.flatMap(messagesOf) };
}

/** A row of `response_conversations`; `messages` on a walk of the chain ending at its last response. */
export interface ConversationRow {
  id: string;
  session_id: string;
  key_hash: string | null;
  last_response_id: string;
  messages?: string | null;
}

export function storedConversation(row: ConversationRow): StoredConversation {
  return { id: row.id, sessionId: row.session_id, keyHash: row.key_hash, lastResponseId: row.last_response_id };
}

/** A conversation and its history: one row per response of its chain, oldest first (one row without messages when the chain is gone); undefined for no rows. */
export function conversationWithHistory(chain: readonly ConversationRow[]): StoredConversation | undefined {
  const [first] = chain;
  return first && { ...storedConversation(first), history: chain.flatMap(messagesOf) };
}

function messagesOf(row: { messages?: string | null }): ChatMessage[] {
  return row.messages ? (JSON.parse(row.messages) as ChatMessage[]) : [];
}

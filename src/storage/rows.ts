import type { ChatMessage, Json, JsonObject, ToolCall, Usage } from "../providers/contract.js";
import type { Checkpoint } from "./checkpoints.js";
import { joinPrompt, splitPrompt, type PromptColumns } from "./prompt-heads.js";
import type { KeyScope, StoredKey } from "./keys.js";
import type { NewTurn, ReplaySource, SessionCompaction, SessionDetail, SessionModelConfig, SessionSummary, StoredTurn } from "./turns.js";
import type { Rejection, VerdictField } from "./verdicts.js";

/*
 * The rows both backends read and write, and how they map to what the port
 * answers: a column is added here once, and SQLite and PostgreSQL follow.
 * Numbers a driver hands over as strings (PostgreSQL's bigint) are read
 * with Number(), which leaves SQLite's numbers as they are.
 */

/** A bigint column: a number from SQLite, a string from node-postgres. */
type BigInt = number | string;

/** A row of `turns`. */
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
  /** The prompt's messages after its head (all of them when prompt_head is null). */
  prompt: string;
  /** The hash of the head stored in prompt_heads, or null (prompt-heads.ts). */
  prompt_head: string | null;
  /** The head's JSON, where a read joins prompt_heads (PROMPT_HEAD_JOIN). */
  prompt_head_text?: string | null;
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
  active?: number;
}

/** The columns replay reads of a turn. */
export type ReplayRow = Pick<TurnRow, "id" | "session_id" | "plugin" | "upstream_model" | "reasoning_text" | "reasoning_details" | "native_record">;

/**
 * The columns a new turn is written with, in the order of turnValues.
 * `position` is not among them: it follows from the session's turns, and
 * each backend counts it its own way.
 */
export const TURN_COLUMNS = `id, session_id, parent_turn_id, model, plugin, provider, host, upstream_model, prompt, content, tool_calls,
  reasoning_text, reasoning_details, native_record, usage, finish_reason, upstream_id, created_at, key_hash, fingerprint, call_key, audit, prompt_head, depth`;

/** A turn row with its prompt head's text beside it: `FROM turns t ${PROMPT_HEAD_JOIN}`, selecting `h.text AS prompt_head_text`. */
export const PROMPT_HEAD_JOIN = "LEFT JOIN prompt_heads h ON h.hash = t.prompt_head";

/**
 * A new turn's values for TURN_COLUMNS (24); `depth` is null when it is the
 * turn's position. `callKey`: callKeyOf(turn.toolCalls), computed by the
 * backend (session matching sits above the port). `prompt`: the turn's
 * prompt as stored (splitPrompt); its head, if any, is the backend's to
 * write to prompt_heads with the turn.
 */
export function turnValues(
  turn: NewTurn,
  createdAt: string,
  callKey: string | undefined,
  carriers = carrierColumns(turn),
  prompt: PromptColumns = splitPrompt(turn.prompt),
): unknown[] {
  return [
    turn.id,
    turn.sessionId,
    turn.parentTurnId ?? null,
    turn.model,
    turn.plugin,
    turn.provider,
    turn.host,
    turn.upstreamModel,
    prompt.rest,
    turn.content,
    turn.toolCalls.length > 0 ? JSON.stringify(turn.toolCalls) : null,
    turn.reasoningText,
    carriers.reasoningDetails,
    carriers.nativeRecord,
    turn.usage ? JSON.stringify(turn.usage) : null,
    turn.finishReason,
    turn.upstreamId ?? null,
    createdAt,
    turn.keyHash,
    turn.fingerprint,
    callKey ?? null,
    turn.audit ? JSON.stringify(turn.audit) : null,
    prompt.head?.hash ?? null,
    turn.depth ?? null,
  ];
}

/** A new turn's JSON carrier columns as written (the SQLite backend sizes its replay cache by them). */
export function carrierColumns(turn: NewTurn): { reasoningDetails: string | null; nativeRecord: string | null } {
  return {
    reasoningDetails: turn.reasoningDetails ? JSON.stringify(turn.reasoningDetails) : null,
    nativeRecord: turn.nativeRecord ? JSON.stringify(turn.nativeRecord) : null,
  };
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

/** A whole stored turn: its replay source (the carriers and who produced them) plus the rest of the row. */
export function toStoredTurn(row: TurnRow): StoredTurn {
  return {
    ...toReplaySource(row),
    seq: Number(row.seq),
    position: row.position,
    parentTurnId: row.parent_turn_id,
    model: row.model,
    provider: row.provider,
    host: row.host,
    content: row.content,
    toolCalls: parseJson<ToolCall[]>(row.tool_calls) ?? [],
    usage: parseJson<Usage>(row.usage),
    finishReason: row.finish_reason,
    upstreamId: row.upstream_id,
    createdAt: row.created_at,
  };
}

/** A row of `sessions` as listed: its newest turn's model and activity (or the row's own), and its count of turns. */
export interface SessionSummaryRow {
  id: string;
  model: string | null;
  parent_id: string | null;
  turns: BigInt;
  created_at: string;
  updated_at: string;
}

export function toSessionSummary(row: SessionSummaryRow): SessionSummary {
  return { id: row.id, model: row.model, parentId: row.parent_id, turns: Number(row.turns), createdAt: row.created_at, updatedAt: row.updated_at };
}

/** A row of `sessions` as `show` reads it. */
export interface SessionRow {
  id: string;
  key_hash: string;
  model: string | null;
  parent_id: string | null;
  model_config: string;
  created_at: string;
  updated_at: string;
}

/** A session with its turns (in position order) and what compaction archived of it. */
export function toSessionDetail(row: SessionRow, turns: readonly TurnRow[], checkpoints: readonly Checkpoint[]): SessionDetail {
  const compaction: SessionCompaction = { archived: new Set(turns.filter((turn) => turn.active === 0).map((turn) => turn.position)), checkpoints };
  return {
    id: row.id,
    model: row.model,
    parentId: row.parent_id,
    turns: turns.length,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    modelConfig: parseJson<SessionModelConfig>(row.model_config) ?? {},
    turnList: turns.map(toStoredTurn),
    prompts: turns.map((turn) => parseJson<ChatMessage[]>(joinPrompt(turn.prompt_head_text, turn.prompt)) ?? []),
    compaction,
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

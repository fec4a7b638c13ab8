import type { Json, JsonObject, ToolCall, Usage, ChatMessage } from "../providers/contract.js";
import type { Checkpoint } from "./checkpoints.js";
import { parseJson, type TurnRow } from "./rows.js";
import type { TurnAudit } from "./session-history.js";
import type { SessionCompaction, SessionDetail, SessionSummary, SessionTurn, StoredCarrier } from "./sessions.js";
import type { SessionModelConfig } from "./turns.js";

/*
 * The rows of sessions as both backends read them for listing and showing
 * (SessionStorage.list and show), mapped once: what a session and its turns
 * look like to the CLI and to session history over HTTP.
 */

/** A row of `sessions` as listed: its newest turn's model, provider and activity (or the row's own), its count of turns and its first prompt. */
export interface SessionSummaryRow {
  id: string;
  key_hash: string;
  model: string | null;
  provider: string | null;
  parent_id: string | null;
  turns: number | string;
  created_at: string;
  updated_at: string;
  first_prompt: string | null;
}

export function toSessionSummary(row: SessionSummaryRow): SessionSummary {
  return {
    id: row.id,
    keyHash: row.key_hash,
    model: row.model,
    provider: row.provider,
    parentId: row.parent_id,
    turns: Number(row.turns),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    firstPrompt: row.first_prompt,
  };
}

/** A row of `sessions` as `show` and `branch` read it; its count of turns and first prompt follow from its turns. */
export type SessionRow = Omit<SessionSummaryRow, "turns" | "first_prompt"> & { model_config: string };

/** A session with its turns (in position order) and what compaction archived of it. */
export function toSessionDetail(row: SessionRow, turns: readonly TurnRow[], checkpoints: readonly Checkpoint[]): SessionDetail {
  const compaction: SessionCompaction = { archived: new Set(turns.filter((turn) => turn.active === 0).map((turn) => turn.position)), checkpoints };
  return {
    id: row.id,
    keyHash: row.key_hash,
    model: row.model,
    provider: row.provider,
    parentId: row.parent_id,
    turns: turns.length,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    firstPrompt: turns[0]?.prompt ?? null,
    modelConfig: parseJson<SessionModelConfig>(row.model_config) ?? {},
    turnList: turns.map(toSessionTurn),
    prompts: turns.map((turn) => parseJson<ChatMessage[]>(turn.prompt) ?? []),
    compaction,
  };
}

/**
 * A whole stored turn as a session shows it. One object literal, no spread:
 * V8 copies a spread followed by more properties on its slow path, which
 * made a turn's mapping several times its JSON parsing (docs/performance.md#session-history).
 */
function toSessionTurn(row: TurnRow): SessionTurn {
  const reasoningText = row.reasoning_text ?? "";
  const reasoningDetails = parseJson<Json[]>(row.reasoning_details);
  const nativeRecord = parseJson<JsonObject>(row.native_record);
  const toolCalls = parseJson<ToolCall[]>(row.tool_calls) ?? [];
  return {
    seq: Number(row.seq),
    id: row.id,
    sessionId: row.session_id,
    position: row.position,
    depth: row.depth ?? row.position,
    parentTurnId: row.parent_turn_id,
    model: row.model,
    plugin: row.plugin,
    provider: row.provider,
    host: row.host,
    upstreamModel: row.upstream_model,
    content: row.content,
    toolCalls,
    reasoningText,
    reasoningDetails,
    nativeRecord,
    usage: parseJson<Usage>(row.usage),
    finishReason: row.finish_reason,
    upstreamId: row.upstream_id,
    createdAt: row.created_at,
    audit: parseJson<TurnAudit>(row.audit),
    carriers: carriersOf(row, reasoningText, reasoningDetails, nativeRecord, toolCalls),
  };
}

/** What a turn holds to replay, by kind and the size of its stored text: never a signature's or an encrypted blob's bytes. */
function carriersOf(
  row: TurnRow,
  reasoningText: string,
  reasoningDetails: Json[] | undefined,
  nativeRecord: JsonObject | undefined,
  toolCalls: readonly ToolCall[],
): StoredCarrier[] {
  const carriers: StoredCarrier[] = [];
  if (reasoningText.length > 0) carriers.push({ kind: "reasoning_text", bytes: Buffer.byteLength(reasoningText) });
  if (row.reasoning_details !== null) {
    const details = reasoningDetails ?? [];
    const types = [...new Set(details.flatMap((entry) => (isObject(entry) && typeof entry.type === "string" ? [entry.type] : [])))];
    carriers.push({ kind: "reasoning_details", items: details.length, bytes: Buffer.byteLength(row.reasoning_details), types });
  }
  if (row.native_record !== null) {
    const type = isObject(nativeRecord) && typeof nativeRecord.type === "string" ? nativeRecord.type : undefined;
    const bytes = Buffer.byteLength(row.native_record);
    carriers.push(type === undefined ? { kind: "native_record", bytes } : { kind: "native_record", bytes, type });
  }
  const extra = toolCalls.filter((call) => call.extra_content !== undefined);
  if (extra.length > 0) {
    const bytes = extra.reduce((sum, call) => sum + Buffer.byteLength(JSON.stringify(call.extra_content)), 0);
    carriers.push({ kind: "extra_content", items: extra.length, bytes });
  }
  return carriers;
}

function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

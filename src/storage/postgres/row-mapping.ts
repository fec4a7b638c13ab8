import type { Json, JsonObject, ToolCall, Usage } from "../../providers/contract.js";
import type { ReplaySource, StoredTurn } from "../turns.js";

/** A row of `turns` as the driver returns it (bigint columns as strings). */
export interface TurnRow {
  seq: string;
  id: string;
  session_id: string;
  position: number;
  parent_turn_id: string | null;
  model: string;
  plugin: string;
  provider: string;
  host: string;
  upstream_model: string;
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
}

export type ReplayRow = Pick<TurnRow, "id" | "session_id" | "plugin" | "upstream_model" | "reasoning_text" | "reasoning_details" | "native_record">;

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

/** A JSON column; undefined for NULL or text that does not parse. */
export function parseJson<T>(text: string | null | undefined): T | undefined {
  if (text === null || text === undefined) return undefined;
  try {
    return JSON.parse(text) as T;
  } catch {
    return undefined;
  }
}

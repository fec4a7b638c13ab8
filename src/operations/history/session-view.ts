import type { ChatMessage, Json } from "../../providers/contract.js";
import { textOf } from "../../providers/message-text.js";
import type { ReplayDecision } from "../../storage/session-history.js";
import type { SessionDetail, SessionSummary, SessionTurn } from "../../storage/sessions.js";
import type { Verdict } from "../../storage/verdicts.js";

/** The first characters of a session's first user message that a list shows. */
const PREVIEW_CHARS = 200;

/** How a session's id, key and verdicts are shown to this caller. */
export interface ViewContext {
  /** The id the caller addresses the session by (its name, or the stored id for the owner key). */
  readonly idOf: (storedId: string) => string;
  /** The name of the key a data scope belongs to; undefined when no key has it any more. */
  readonly keyNameOf: (keyHash: string) => string | undefined;
}

/** A session as `GET /v1/sessions` lists it (docs/api.md#get-v1sessions). */
export function sessionSummary(session: SessionSummary, view: ViewContext): Record<string, unknown> {
  return {
    object: "session",
    id: view.idOf(session.id),
    key: view.keyNameOf(session.keyHash) ?? null,
    model: session.model,
    provider: session.provider,
    parent_id: session.parentId === null ? null : view.idOf(session.parentId),
    turn_count: session.turns,
    created_at: session.createdAt,
    updated_at: session.updatedAt,
    preview: previewOf(session.firstPrompt),
  };
}

/** A session with its turns (docs/api.md#get-v1sessionsid); `verdicts` are those in force, for the dates of `left_out`. */
export function sessionDetail(session: SessionDetail, view: ViewContext, verdicts: readonly Verdict[]): Record<string, unknown> {
  const positions = new Map(session.turnList.map((turn) => [turn.id, turn.position]));
  const turns = session.turnList.map((turn, index) => turnView(turn, session.prompts[index], positions, verdicts));
  return { ...sessionSummary(session, view), turns };
}

function turnView(
  turn: SessionTurn,
  prompt: readonly ChatMessage[],
  positions: ReadonlyMap<string, number>,
  verdicts: readonly Verdict[],
): Record<string, unknown> {
  const { audit, toolCalls } = turn;
  return {
    id: turn.id,
    position: turn.position,
    depth: turn.depth,
    parent_turn_id: turn.parentTurnId,
    created_at: turn.createdAt,
    model: turn.model,
    route: audit?.route ?? null,
    route_match: audit?.route_match ?? null,
    provider: turn.provider,
    host: turn.host,
    upstream_model: turn.upstreamModel,
    upstream_id: turn.upstreamId,
    finish_reason: turn.finishReason,
    usage: turn.usage ?? null,
    timings: audit?.timings ?? null,
    prompt: prompt.map(promptMessage),
    content: turn.content,
    // a tool call's extra_content is a carrier (a thought signature): counted under carriers, never shown
    tool_calls: toolCalls.map((call) => ({ id: call.id, type: call.type, function: call.function })),
    reasoning: turn.reasoningText,
    carriers: turn.carriers,
    replay: audit ? replayView(audit.replay, turn, positions, verdicts) : null,
  };
}

/** A prompt message as text: a part that is not text is named in brackets, its bytes left out (an image as a data URL). */
function promptMessage(message: ChatMessage): Record<string, unknown> {
  const content = Array.isArray(message.content)
    ? message.content.map((part) => (part.type === "text" ? textOf([part]) : `[${partName(part.type)}]`)).join("")
    : textOf(message.content);
  return message.tool_call_id === undefined ? { role: message.role, content } : { role: message.role, content, tool_call_id: message.tool_call_id };
}

function partName(type: Json | undefined): string {
  if (type === "image_url" || type === "input_image") return "image";
  if (type === "input_audio") return "audio";
  if (type === "file" || type === "input_file") return "file";
  return typeof type === "string" ? type : "part";
}

/**
 * The stored decision expanded: each matched turn's position in this
 * session, each attachment's turn, and each left-out field's verdict key
 * (the turn's own provider, host and upstream model) with its date while
 * the verdict is in force.
 */
function replayView(replay: ReplayDecision, turn: SessionTurn, positions: ReadonlyMap<string, number>, verdicts: readonly Verdict[]): Record<string, unknown> {
  const positionOf = (turnId: string | null) => (turnId === null ? null : (positions.get(turnId) ?? null));
  const matchedTurn = new Map(replay.matched.map(([message, turnId]) => [message, turnId]));
  const { provider, host, upstreamModel: model } = turn;
  const verdictDate = (field: string) =>
    verdicts.find((verdict) => verdict.provider === provider && verdict.host === host && verdict.model === model && verdict.field === field)?.recorded_at ??
    null;
  return {
    effective: replay.effective,
    matched: replay.matched.map(([message, turnId, by]) => ({ message, turn_id: turnId, position: positionOf(turnId), by })),
    attached: replay.attached.map(([message, fields, stated]) => {
      const turnId = stated === undefined ? (matchedTurn.get(message) ?? null) : stated;
      return { message, turn_id: turnId, position: positionOf(turnId), fields };
    }),
    placeholders: replay.placeholders,
    left_out: replay.left_out.map(([field, by]) => ({ field, by, provider, host, model, recorded_at: by === "opt_out" ? null : verdictDate(field) })),
    retried: replay.retried,
  };
}

/** The first user message's text, cut to PREVIEW_CHARS; null when the session has none. */
function previewOf(firstPrompt: string | null): string | null {
  const user = parse<ChatMessage[]>(firstPrompt)?.find((message) => message.role === "user");
  if (!user) return null;
  const text = promptMessage(user).content as string;
  return text.length > PREVIEW_CHARS ? text.slice(0, PREVIEW_CHARS) : text;
}

function parse<T>(text: string | null): T | undefined {
  if (text === null) return undefined;
  try {
    return JSON.parse(text) as T;
  } catch {
    return undefined;
  }
}

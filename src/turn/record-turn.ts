import type { AssistantTurn } from "../routing/carriers/turn-accumulator.js";
import type { Logger } from "../foundation/logging/logger.js";
import type { ChatMessage, JsonObject } from "../providers/contract.js";
import type { PluginRegistry } from "../providers/plugin-registry.js";
import { fingerprintOf } from "../conversation/fingerprint.js";
import type { NewTurn } from "../storage/turns.js";
import type { TurnAudit } from "../storage/session-history.js";

/** Where a finished turn came from: all a turn keeps of its request and route. */
export interface TurnOrigin {
  readonly turnId: string;
  readonly sessionId: string;
  readonly keyHash: string;
  readonly parentTurnId: string | undefined;
  /** The request's assistant messages plus one: the turn's depth in its conversation (NewTurn.depth). */
  readonly depth: number;
  /** The model name the client asked for. */
  readonly clientModel: string;
  readonly pluginName: string;
  readonly key: { readonly provider: string; readonly host: string; readonly model: string };
  /** The messages that asked for this turn. */
  readonly prompt: readonly ChatMessage[];
}

/**
 * The stored row of a finished turn: every carrier verbatim, and the
 * fingerprint stateless clients find it by, and what the gateway decided
 * and measured for it (`audit`, docs/api.md#session-history). One literal: spreading the
 * origin into a row with the rest makes V8 rebuild it property by property.
 */
export function turnRecord(origin: TurnOrigin, turn: AssistantTurn, nativeRecord: JsonObject | undefined, audit?: TurnAudit): NewTurn {
  return {
    id: origin.turnId,
    sessionId: origin.sessionId,
    keyHash: origin.keyHash,
    parentTurnId: origin.parentTurnId,
    model: origin.clientModel,
    plugin: origin.pluginName,
    provider: origin.key.provider,
    host: origin.key.host,
    upstreamModel: origin.key.model,
    prompt: origin.prompt,
    content: turn.content,
    toolCalls: turn.toolCalls,
    reasoningText: turn.reasoningText,
    reasoningDetails: turn.reasoningDetails,
    nativeRecord,
    usage: turn.usage,
    finishReason: turn.finishReason,
    upstreamId: turn.upstreamId,
    fingerprint: fingerprintOf(turn.content, turn.toolCalls),
    depth: origin.depth,
    audit,
  };
}

/** The turn's native record when it passes its plugin's schema; otherwise the turn is stored without it, and that is logged. */
export function checkedNativeRecord(
  registry: PluginRegistry,
  log: Logger,
  record: JsonObject | undefined,
  plugin: string,
  sessionId: string,
): JsonObject | undefined {
  if (!record) return undefined;
  const validate = registry.get(plugin)?.validateNative;
  const problem = validate ? validate(record) : "the plugin declares no native record type";
  if (!problem) return record;
  log.error({ plugin, session_id: sessionId, problem }, "native record fails the plugin's schema; the turn is stored without it");
  return undefined;
}

/** The messages that asked for this turn: those after the last assistant message. */
export function promptOf(messages: readonly ChatMessage[]): ChatMessage[] {
  return messages.slice(messages.findLastIndex((message) => message.role === "assistant") + 1);
}

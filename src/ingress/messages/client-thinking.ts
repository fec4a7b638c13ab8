import { AS_SENT, type ChatMessage, type JsonObject } from "../../providers/contract.js";
import type { ResolvedModel } from "../../routing/routes/route-table.js";
import type { ReplaySource } from "../../storage/turns.js";
import { isEnvelope } from "../../routing/carriers/envelope.js";
import { FOR_ONE_REQUEST, type OneRequestSource } from "../../routing/carriers/replay.js";
import type { AnthropicMessage, ContentBlock } from "./request.js";

/**
 * On an Anthropic route, the thinking and redacted_thinking blocks a client
 * sent back, as the carriers of their assistant message (by its index in
 * the turn request): the anthropic plugin's record of that turn, the
 * client's blocks verbatim and in their order. Replay sends them in place
 * of the store's (RequestContext.sealed), so a history the store does not
 * hold (begun elsewhere, or its session removed) goes upstream as the
 * client sent it; Anthropic checks the signatures. A message without
 * thinking blocks gets none here: the store's signed blocks are re-attached
 * to it, found as for any stateless client. A block whose signature is
 * carrierd's envelope (a turn answered on another route) is never among
 * them: Anthropic did not sign it and refuses it, so it is not sent
 * (docs/sessions-and-replay.md#switching-models).
 */
export function clientThinking(
  messages: readonly AnthropicMessage[],
  canonical: readonly ChatMessage[],
  resolved: ResolvedModel,
): Map<number, ReplaySource> | undefined {
  const assistantIndexes = canonical.flatMap((message, index) => (message.role === "assistant" ? [index] : []));
  let sources: Map<number, ReplaySource> | undefined;
  let ordinal = 0;
  for (const message of messages) {
    if (message.role !== "assistant") continue;
    const index = assistantIndexes[ordinal++];
    if (index === undefined || typeof message.content === "string") continue;
    if (!message.content.some(isOwnReasoning)) continue;
    const layout: JsonObject[] = [];
    let reasoningText = "";
    for (const block of message.content) {
      if (isOwnReasoning(block)) layout.push(block);
      else if (block.type === "text") layout.push({ type: "text", text: block.text ?? "" });
      else if (block.type === "tool_use") layout.push({ type: "tool_use", id: block.id ?? "" });
      if (isOwnReasoning(block) && block.type === "thinking" && typeof block.thinking === "string") reasoningText += block.thinking;
    }
    const source: OneRequestSource = {
      id: `client:${index}`,
      sessionId: "",
      plugin: resolved.provider.plugin,
      upstreamModel: resolved.upstreamModel,
      reasoningText,
      reasoningDetails: undefined,
      // every thinking block the client sent is in the record (none was carrierd's envelope): the carried body leaves the message as sent
      nativeRecord: message.content.every(isOwnOrNotReasoning) ? { content: layout, [AS_SENT]: true } : { content: layout },
      [FOR_ONE_REQUEST]: true,
    };
    (sources ??= new Map()).set(index, source);
  }
  return sources;
}

function isOwnOrNotReasoning(block: ContentBlock): boolean {
  return (block.type !== "thinking" && block.type !== "redacted_thinking") || isOwnReasoning(block);
}

/** A thinking or redacted_thinking block that is not carrierd's envelope of another route's turn. */
function isOwnReasoning(block: ContentBlock): boolean {
  if (block.type === "redacted_thinking") return true;
  return block.type === "thinking" && !isEnvelope(block.signature);
}

import type { ChatMessage, JsonObject } from "../../providers/contract.js";
import type { ResolvedModel } from "../../routing/routes/route-table.js";
import type { ReplaySource } from "../../storage/turns.js";
import type { AnthropicMessage } from "./request.js";

/**
 * On an Anthropic route, the thinking and redacted_thinking blocks a client
 * sent back, as the carriers of their assistant message (by its index in
 * the turn request): the anthropic plugin's record of that turn, the
 * client's blocks verbatim and in their order. Replay sends them in place
 * of the store's (RequestContext.sealed), so a history the store does not
 * hold (begun elsewhere, or its session removed) goes upstream as the
 * client sent it; Anthropic checks the signatures. A message without
 * thinking blocks gets none here: the store's signed blocks are re-attached
 * to it, found as for any stateless client.
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
    if (!message.content.some((block) => block.type === "thinking" || block.type === "redacted_thinking")) continue;
    const layout: JsonObject[] = [];
    let reasoningText = "";
    for (const block of message.content) {
      if (block.type === "thinking" || block.type === "redacted_thinking") layout.push(block);
      else if (block.type === "text") layout.push({ type: "text", text: block.text ?? "" });
      else if (block.type === "tool_use") layout.push({ type: "tool_use", id: block.id ?? "" });
      if (block.type === "thinking" && typeof block.thinking === "string") reasoningText += block.thinking;
    }
    (sources ??= new Map()).set(index, {
      id: `client:${index}`,
      sessionId: "",
      plugin: resolved.provider.plugin,
      upstreamModel: resolved.upstreamModel,
      reasoningText,
      reasoningDetails: undefined,
      nativeRecord: { content: layout },
    });
  }
  return sources;
}

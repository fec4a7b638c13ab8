import { type ChatMessage, isJsonObject, type Json, type JsonObject, textOf, type ToolCall } from "../../src/providers/plugin-api.js";

/**
 * The Anthropic native record: the order of one assistant turn's content
 * blocks, with every `thinking` / `redacted_thinking` block exactly as the
 * provider produced it. Bedrock's Converse plugin stores its reasoning in
 * this same format (as hermes-agent stores Bedrock turns, https://github.com/NousResearch/hermes-agent, `agent/bedrock_adapter.py`).
 */
export interface AnthropicRecord {
  content: LayoutBlock[];
}

export type ThinkingBlock = { type: "thinking"; thinking: string; signature: string };
export type RedactedThinkingBlock = { type: "redacted_thinking"; data: string };
export type LayoutBlock = ThinkingBlock | RedactedThinkingBlock | { type: "text"; text: string } | { type: "tool_use"; id: string };

/** Folds record fragments: blocks arrive one at a time as the stream closes them. */
export function mergeLayout(collected: JsonObject | undefined, fragment: JsonObject): JsonObject {
  const before = Array.isArray(collected?.content) ? collected.content : [];
  const added = Array.isArray(fragment.content) ? fragment.content : [];
  return { content: [...before, ...added] };
}

/** The record, read tolerantly: anything that is not a known block is skipped. */
export function readLayout(record: JsonObject | undefined): LayoutBlock[] | undefined {
  if (!record || !Array.isArray(record.content)) return undefined;
  return record.content.filter((block: Json): block is JsonObject & LayoutBlock => {
    if (!isJsonObject(block)) return false;
    switch (block.type) {
      case "thinking":
        return typeof block.thinking === "string" && typeof block.signature === "string";
      case "redacted_thinking":
        return typeof block.data === "string";
      case "text":
        return typeof block.text === "string";
      case "tool_use":
        return typeof block.id === "string";
      default:
        return false;
    }
  });
}

/** What a plugin makes of each kind of block when it rebuilds an assistant turn. */
export interface LayoutWriter<Block> {
  reasoning(block: ThinkingBlock | RedactedThinkingBlock): Block | undefined;
  text(text: string): Block;
  toolUse(call: ToolCall): Block;
}

/**
 * Rebuilds an assistant turn's blocks in the order the provider produced
 * them. Reasoning blocks come from the record, untouched; text and tool calls
 * come from the message the client sent (it owns those), placed where the
 * record says they were. When the client's text still equals the stored
 * text, the stored split into blocks is kept; otherwise the client's text
 * goes where the first text block was. Tool calls the record does not know
 * go last, in the client's order.
 */
export function rebuildTurn<Block>(message: ChatMessage, layout: readonly LayoutBlock[] | undefined, writer: LayoutWriter<Block>): Block[] {
  const clientText = textOf(message.content);
  const calls = message.tool_calls ?? [];
  if (!layout) return [...(clientText ? [writer.text(clientText)] : []), ...calls.map((call) => writer.toolUse(call))];

  const storedTexts = layout.filter((block) => block.type === "text").map((block) => block.text);
  const keepStoredSplit = storedTexts.join("").trimEnd() === clientText.trimEnd();
  const byId = new Map(calls.map((call) => [call.id, call]));
  const used = new Set<string>();
  const out: Block[] = [];
  let textPlaced = false;
  for (const block of layout) {
    if (block.type === "thinking" || block.type === "redacted_thinking") {
      const written = writer.reasoning(block);
      if (written !== undefined) out.push(written);
    } else if (block.type === "text") {
      if (keepStoredSplit) {
        if (block.text) out.push(writer.text(block.text));
      } else if (!textPlaced && clientText) {
        out.push(writer.text(clientText));
      }
      textPlaced = true;
    } else {
      const call = byId.get(block.id);
      if (!call || used.has(call.id)) continue;
      if (!textPlaced && !keepStoredSplit && clientText) {
        // the client added text the turn did not have: it goes before the first tool call, as Anthropic orders them
        out.push(writer.text(clientText));
        textPlaced = true;
      }
      out.push(writer.toolUse(call));
      used.add(call.id);
    }
  }
  if (!textPlaced && clientText && !keepStoredSplit) out.push(writer.text(clientText));
  for (const call of calls) if (!used.has(call.id)) out.push(writer.toolUse(call));
  return out;
}

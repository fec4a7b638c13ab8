import type { ChatMessage, JsonObject } from "../../providers/contract.js";
import { splitInlineReasoning } from "../../conversation/reasoning-blocks.js";

/** An assistant message's content with the reasoning blocks a frontend inlined cut out, and the reasoning they held. */
export interface InlineSplit {
  readonly content: ChatMessage["content"];
  /** The tag pairs' bodies, joined; "" when only Open WebUI `<details type="reasoning">` renderings were cut. */
  readonly reasoning: string;
}

/**
 * Cuts the reasoning blocks out of a client's assistant content: a string,
 * or each text part of a parts array (other parts untouched). Frontends put
 * them there (Open WebUI's `<think>…</think>` in its tool loop, its
 * `<details type="reasoning">` in older chats); on a route whose own field
 * carries reasoning they are not answer text. `undefined` when the content
 * holds none, so the message is not copied.
 */
export function splitInlineContent(content: ChatMessage["content"]): InlineSplit | undefined {
  if (typeof content === "string") {
    const split = splitInlineReasoning(content);
    return split && { content: split.text, reasoning: split.reasoning };
  }
  if (!Array.isArray(content)) return undefined;
  let parts: (JsonObject | undefined)[] | undefined;
  const found: string[] = [];
  content.forEach((part, index) => {
    if (part.type !== "text" || typeof part.text !== "string") return;
    const split = splitInlineReasoning(part.text);
    if (!split) return;
    // a part that held only reasoning goes: some providers refuse an empty text part
    (parts ??= content.slice())[index] = split.text ? { ...part, text: split.text } : undefined;
    if (split.reasoning) found.push(split.reasoning);
  });
  if (!parts) return undefined;
  const kept = parts.filter((part) => part !== undefined);
  return { content: kept.length > 0 ? kept : "", reasoning: found.join("\n\n") };
}

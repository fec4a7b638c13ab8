import type { ChatMessage } from "./contract.js";

/**
 * A canonical message's content as plain text: the string itself, or its
 * `text` parts joined (images, files and other parts say nothing here).
 */
export function textOf(content: ChatMessage["content"]): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((part) => (part.type === "text" && typeof part.text === "string" ? part.text : "")).join("");
}

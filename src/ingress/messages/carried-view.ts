import type { JsonObject } from "../../providers/contract.js";
import { isRecord } from "../../foundation/util/json-readers.js";
import type { AnthropicMessage, ContentBlock, MessagesRequest } from "./request.js";

/** Block types the turn's view of a carried request reads; the rest the upstream alone reads. */
const USER_BLOCKS = new Set(["text", "image", "document", "tool_result"]);
const ASSISTANT_BLOCKS = new Set(["text", "tool_use", "thinking", "redacted_thinking"]);

/**
 * What the turn reads of a carried Messages request (docs/architecture.md#two-paths):
 * the conversation's user and assistant messages with the blocks the turn
 * pipeline knows, from which the session is found, replay decides and the
 * prompt is stored. The upstream gets the request itself, so nothing is
 * refused here: what the view cannot read (a `system` message mid-conversation,
 * a server tool's block, a field carrierd has never heard of) is left out of
 * the view only. Each assistant message of the request is one of the view's,
 * in order: the carried body's replay splices find theirs by that order.
 */
export function carriedView(body: JsonObject, model: string): MessagesRequest {
  const messages: AnthropicMessage[] = [];
  for (const message of Array.isArray(body.messages) ? body.messages : []) {
    if (!isRecord(message) || (message.role !== "user" && message.role !== "assistant")) continue;
    const known = message.role === "user" ? USER_BLOCKS : ASSISTANT_BLOCKS;
    const content = typeof message.content === "string" ? message.content : viewBlocks(message.content, known);
    messages.push({ role: message.role, content });
  }
  const view: MessagesRequest = { model, max_tokens: typeof body.max_tokens === "number" ? body.max_tokens : 0, messages };
  if (typeof body.system === "string") view.system = body.system;
  else if (Array.isArray(body.system)) view.system = body.system.filter((block): block is ContentBlock => isRecord(block) && typeof block.text === "string");
  if (Array.isArray(body.tools)) view.tools = body.tools.filter((tool) => isRecord(tool) && typeof tool.name === "string") as MessagesRequest["tools"];
  if (body.stream === true) view.stream = true;
  return view;
}

function viewBlocks(content: unknown, known: ReadonlySet<string>): ContentBlock[] {
  if (!Array.isArray(content)) return [];
  const blocks: ContentBlock[] = [];
  for (const block of content) {
    if (!isRecord(block) || typeof block.type !== "string" || !known.has(block.type) || !readable(block as ContentBlock)) continue;
    if (block.type === "tool_result" && Array.isArray(block.content))
      blocks.push({
        ...(block as ContentBlock),
        content: (block.content as unknown[]).filter((inner) => isRecord(inner) && readable(inner as ContentBlock)) as JsonObject[],
      });
    else blocks.push(block as ContentBlock);
  }
  return blocks;
}

/** Whether the turn request's conversion reads this block (an image or document of a source it knows). */
function readable(block: ContentBlock): boolean {
  const source = isRecord(block.source) ? block.source : undefined;
  switch (block.type) {
    case "image":
      return source?.type === "base64" || source?.type === "url";
    case "document":
      return source?.type === "base64" || source?.type === "text" || (source?.type === "content" && Array.isArray(source.content));
    case "text":
    case "tool_result":
    case "tool_use":
    case "thinking":
    case "redacted_thinking":
      return true;
    default:
      return false;
  }
}

import { type ChatMessage, type JsonObject, parseToolArguments, readObject, readString } from "../../src/providers/plugin-api.js";
import { readLayout, rebuildTurn } from "./content-layout.js";

/**
 * OpenAI chat messages → Anthropic `system` + `messages`. The conversion is
 * a pure function of the history, so every turn of a conversation produces
 * the same prefix: Anthropic binds signatures to it (preserved thinking,
 * https://platform.claude.com/docs/en/build-with-claude/preserved-thinking), so nothing earlier may ever be rewritten.
 */
export function convertMessages(messages: readonly ChatMessage[]): { system: JsonObject[]; messages: AnthropicMessage[] } {
  const system: JsonObject[] = [];
  const out: AnthropicMessage[] = [];
  for (const message of messages) {
    switch (message.role) {
      case "system":
      case "developer":
        system.push(...textBlocks(message.content));
        break;
      case "user":
        out.push({ role: "user", content: userBlocks(message.content) });
        break;
      case "tool": {
        const result: JsonObject = { type: "tool_result", tool_use_id: message.tool_call_id ?? "" };
        const content = textBlocks(message.content);
        if (content.length > 0) result.content = content;
        // parallel results answer one assistant turn: they share one user message
        const previous = out.at(-1);
        if (previous?.role === "user" && previous.content.every((block) => block.type === "tool_result")) {
          previous.content.push(result);
        } else {
          out.push({ role: "user", content: [result] });
        }
        break;
      }
      case "assistant": {
        const content = assistantBlocks(message);
        // Anthropic rejects an assistant message with no blocks; an empty turn carries nothing to replay
        if (content.length > 0) out.push({ role: "assistant", content });
        break;
      }
    }
  }
  return { system, messages: out };
}

/** One entry of the Messages API's `messages`, as built here. */
type AnthropicMessage = { role: "user" | "assistant"; content: JsonObject[] };

/**
 * An assistant turn: the stored thinking / redacted_thinking blocks verbatim
 * (the record is the only source: the readable reasoning text alone cannot
 * make a valid signed block), then the client's text and tool calls where
 * the record says they were.
 */
function assistantBlocks(message: ChatMessage): JsonObject[] {
  return rebuildTurn<JsonObject>(message, readLayout(message.native_record), {
    reasoning: (block) => block,
    text: (text) => ({ type: "text", text }),
    toolUse: (call) => ({ type: "tool_use", id: call.id, name: call.function.name, input: parseToolArguments(call.function.arguments) }),
  });
}

/** Text content as text blocks; a part's `cache_control` (OpenRouter-style) is kept. Empty text is not a block. */
function textBlocks(content: ChatMessage["content"]): JsonObject[] {
  if (typeof content === "string") return content ? [{ type: "text", text: content }] : [];
  if (!Array.isArray(content)) return [];
  const blocks: JsonObject[] = [];
  for (const part of content) {
    if (part.type !== "text" || typeof part.text !== "string" || !part.text) continue;
    const block: JsonObject = { type: "text", text: part.text };
    if (part.cache_control) block.cache_control = part.cache_control;
    blocks.push(block);
  }
  return blocks;
}

function userBlocks(content: ChatMessage["content"]): JsonObject[] {
  if (!Array.isArray(content)) return textBlocks(content);
  const blocks: JsonObject[] = [];
  for (const part of content) {
    if (part.type === "text") blocks.push(...textBlocks([part]));
    else if (part.type === "image_url") {
      const image = imageBlock(part);
      if (image) blocks.push(image);
    } else if (part.type === "file") {
      const document = documentBlock(part);
      if (document) blocks.push(document);
    }
  }
  return blocks;
}

/** `image_url` parts: data URLs become base64 sources, anything else a URL source. */
function imageBlock(part: JsonObject): JsonObject | undefined {
  const url = typeof part.image_url === "string" ? part.image_url : readString(readObject(part.image_url)?.url);
  if (typeof url !== "string") return undefined;
  const data = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  return { type: "image", source: data ? { type: "base64", media_type: data[1], data: data[2] } : { type: "url", url } };
}

/** `file` parts holding a base64 PDF become document blocks. */
function documentBlock(part: JsonObject): JsonObject | undefined {
  const fileData = readString(readObject(part.file)?.file_data);
  const data = fileData === undefined ? null : /^data:([^;,]+);base64,(.*)$/s.exec(fileData);
  return data ? { type: "document", source: { type: "base64", media_type: data[1], data: data[2] } } : undefined;
}

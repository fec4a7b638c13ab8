import { newId } from "../../turn/sessions/session-id.js";
import type { ChatMessage, Json, JsonObject } from "../../providers/contract.js";
import { readObject, readString } from "../../foundation/util/json-readers.js";

/**
 * A compacted window (canonical chat messages) as Responses items, for
 * POST /v1/responses/compact: an assistant turn becomes its reasoning item,
 * its message and its function calls, in that order, as a response lists
 * them; a tool message a function_call_output. carrierd's summary is plain
 * text, so it is the user message that goes upstream, not an encrypted item.
 */
export function windowItems(messages: readonly ChatMessage[]): JsonObject[] {
  const items: JsonObject[] = [];
  for (const message of messages) {
    switch (message.role) {
      case "assistant": {
        if (message.reasoning_content)
          items.push({ type: "reasoning", id: newId("rs_"), summary: [{ type: "summary_text", text: message.reasoning_content }] });
        const text = typeof message.content === "string" ? message.content : textOf(message.content);
        if (text)
          items.push({ type: "message", id: newId("msg_"), status: "completed", role: "assistant", content: [{ type: "output_text", text, annotations: [] }] });
        for (const call of message.tool_calls ?? [])
          items.push({
            type: "function_call",
            id: newId("fc_"),
            status: "completed",
            call_id: call.id,
            name: call.function.name,
            arguments: call.function.arguments,
          });
        break;
      }
      case "tool":
        items.push({
          type: "function_call_output",
          id: newId("fco_"),
          status: "completed",
          call_id: message.tool_call_id ?? "",
          output: typeof message.content === "string" ? message.content : textOf(message.content),
        });
        break;
      default:
        items.push({ type: "message", id: newId("msg_"), status: "completed", role: message.role, content: inputParts(message.content) });
    }
  }
  return items;
}

function inputParts(content: ChatMessage["content"]): Json[] {
  if (typeof content === "string") return [{ type: "input_text", text: content }];
  return (content ?? []).map((part): JsonObject => {
    if (part.type === "image_url") {
      const image = readObject(part.image_url);
      return { type: "input_image", image_url: readString(image?.url) ?? null, detail: readString(image?.detail) ?? "auto" };
    }
    if (part.type === "file") return { type: "input_file", ...readObject(part.file) };
    return { type: "input_text", text: typeof part.text === "string" ? part.text : "" };
  });
}

function textOf(content: ChatMessage["content"]): string {
  return Array.isArray(content) ? content.map((part) => (typeof part.text === "string" ? part.text : "")).join("") : "";
}

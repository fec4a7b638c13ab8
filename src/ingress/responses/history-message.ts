import type { AssistantTurn } from "../../routing/carriers/turn-accumulator.js";
import type { ChatMessage, JsonObject } from "../../providers/contract.js";
import { shown } from "../../foundation/util/shown.js";
import type { NamespacedNames } from "./namespaced-names.js";

/**
 * The turn as the next request's history holds it. Tool-call ids come from
 * the items the client saw, so its `function_call_output`s match them.
 */
export function assistantMessage(turn: AssistantTurn, items: JsonObject[], names: NamespacedNames): ChatMessage {
  const calls = items.filter((item) => item.type === "function_call");
  const message: ChatMessage = { role: "assistant", content: turn.content || (calls.length > 0 ? null : "") };
  if (turn.reasoningText) message.reasoning_content = turn.reasoningText;
  if (calls.length > 0)
    message.tool_calls = calls.map((item) => ({
      id: shown(item.call_id),
      type: "function" as const,
      function: {
        name: typeof item.namespace === "string" ? names.flatten(item.namespace, shown(item.name)) : shown(item.name),
        arguments: shown(item.arguments),
      },
    }));
  return message;
}

import { GatewayError } from "../../foundation/errors/gateway-error.js";
import type { ChatRequest, JsonObject } from "../../providers/contract.js";
import { shown } from "../../foundation/util/shown.js";
import { readObject } from "../../foundation/util/json-readers.js";

/**
 * The rules OpenAI's chat completions apply beyond the body's shape, each a
 * 400 naming the parameter, so a client learns of its mistake from carrierd
 * rather than from whichever upstream the route reaches (or, worse, from an
 * upstream that accepts the request and answers something odd). One pass
 * over the messages, no allocation per message beyond the set of call ids.
 */
export function checkChatRules(request: ChatRequest): void {
  if (request.tools) request.tools.forEach(checkTool);
  if (request.tool_choice !== undefined) checkToolChoice(request.tool_choice);
  checkMessages(request.messages);
}

/** A function tool must be whole; any other type is a hosted tool, which its route decides about (src/ingress/hosted-tools.ts). */
function checkTool(tool: JsonObject, index: number): void {
  const path = `tools[${index}]`;
  if (tool.type !== "function") return;
  const fn = tool.function;
  if (!fn || typeof fn !== "object" || Array.isArray(fn)) throw invalid(`Missing required parameter: '${path}.function'.`, `${path}.function`);
  const name = fn.name;
  if (typeof name !== "string" || name === "") throw invalid(`Missing required parameter: '${path}.function.name'.`, `${path}.function.name`);
  const parameters = fn.parameters;
  if (parameters !== undefined && (parameters === null || typeof parameters !== "object" || Array.isArray(parameters))) {
    throw invalid(`Invalid type for '${path}.function.parameters': expected an object.`, `${path}.function.parameters`);
  }
}

function checkToolChoice(choice: unknown): void {
  if (typeof choice === "string") {
    if (choice === "none" || choice === "auto" || choice === "required") return;
    throw invalid(
      `Invalid value for 'tool_choice': '${choice}'. Supported values are: 'none', 'auto' and 'required', or an object naming a function.`,
      "tool_choice",
    );
  }
  // the schema lets only a string or an object through
  const object = readObject(choice) ?? {};
  if (object.type === "function") {
    const fn = readObject(object.function);
    if (!fn || typeof fn.name !== "string") throw invalid("Missing required parameter: 'tool_choice.function.name'.", "tool_choice.function.name");
    return;
  }
  if (object.type === "allowed_tools") return;
  // forcing a hosted tool: its route decides (src/ingress/hosted-tools.ts)
  if (typeof object.type === "string") return;
  throw invalid(
    `Invalid value for 'tool_choice.type': '${shown(object.type)}'. Supported values are: 'function', 'allowed_tools' or a hosted tool's type.`,
    "tool_choice.type",
  );
}

/**
 * Content is required but on assistant messages, and a tool message answers
 * a call an earlier assistant message made. Calls left unanswered before the
 * next user message are the upstream's to judge: OpenAI, DeepSeek and
 * Anthropic refuse them, local servers and several others take them (a user
 * who stopped a tool and typed on), and the route decides which one answers.
 */
function checkMessages(messages: ChatRequest["messages"]): void {
  const calls = new Set<string>();
  messages.forEach((message, index) => {
    const path = `messages[${index}]`;
    if (message.role !== "assistant" && message.content === undefined) throw invalid(`Missing required parameter: '${path}.content'.`, `${path}.content`);
    if (message.role === "assistant" && message.tool_calls) {
      for (const call of message.tool_calls) calls.add(call.id);
    } else if (message.role === "tool") {
      const id = message.tool_call_id;
      if (id === undefined) throw invalid(`Missing required parameter: '${path}.tool_call_id'.`, `${path}.tool_call_id`);
      if (!calls.has(id))
        throw invalid(
          `Invalid parameter: messages with role 'tool' must be a response to a preceding message with 'tool_calls'; no earlier assistant message made the call '${id}'.`,
          `${path}.tool_call_id`,
        );
    }
  });
}

function invalid(message: string, param: string): GatewayError {
  return new GatewayError("invalid_request", message, param);
}

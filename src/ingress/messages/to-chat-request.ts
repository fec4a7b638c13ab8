import { GatewayError } from "../../foundation/errors/gateway-error.js";
import type { ChatMessage, ChatRequest, JsonObject, ToolCall } from "../../providers/contract.js";
import { shown } from "../../foundation/util/shown.js";
import type { AnthropicMessage, AnthropicTool, ContentBlock, MessagesRequest } from "./request.js";

/** What the conversion needs to know of the route the request goes to. */
export interface ConversionTarget {
  /** The route speaks the Messages API itself (the anthropic plugin): Anthropic's own keys, tools and cache_control go on as sent. */
  readonly anthropic: boolean;
  /** The client's `anthropic-beta` header: an Anthropic route's upstream gets it (the anthropic plugin sends `anthropic_beta` as that header). */
  readonly betas?: string;
}

/** Top-level keys only the Messages API knows, passed on to an Anthropic route (the anthropic plugin sends them as they are). */
const ANTHROPIC_ONLY_KEYS = ["thinking", "top_k", "output_config", "context_management", "container", "mcp_servers", "inference_geo"] as const;

/** Keys that ask for something only Anthropic runs: refused on any other route rather than silently dropped. */
const REFUSED_ELSEWHERE: Readonly<Record<string, string>> = {
  mcp_servers: "MCP servers run inside Anthropic's API",
  container: "code-execution containers run inside Anthropic's API",
};

/** The top-level keys an OpenAI-style route takes, as they are or mapped (toChatRequest); the rest it has no equivalent for. */
const TRANSLATED_KEYS = new Set([
  "model",
  "max_tokens",
  "messages",
  "system",
  "stream",
  "stop_sequences",
  "temperature",
  "top_p",
  "tools",
  "tool_choice",
  "thinking",
  "output_config",
]);

/**
 * The top-level keys of a Messages request a route that is not Anthropic's
 * drops: `top_k`, `metadata`, `context_management`, `service_tier`,
 * `inference_geo`, and any key Anthropic adds next (docs/api.md#what-maps-to-what).
 */
export function droppedKeys(request: MessagesRequest): string[] {
  return Object.keys(request).filter((key) => !TRANSLATED_KEYS.has(key) && request[key] !== undefined);
}

/**
 * A Messages request as the gateway's canonical turn request (OpenAI chat
 * completions): system and messages, tools, tool_choice, stop sequences and
 * the thinking switch in the names every plugin reads. docs/api.md#messages-api
 * lists what maps to what on each kind of route.
 */
export function toChatRequest(request: MessagesRequest, target: ConversionTarget): ChatRequest {
  const messages: ChatMessage[] = [];
  const system = systemMessage(request.system, target);
  if (system) messages.push(system);
  request.messages.forEach((message, index) => messages.push(...convertMessage(message, index, target)));
  const chat: ChatRequest = { model: request.model, messages, max_tokens: request.max_tokens };
  if (request.stream !== undefined) chat.stream = request.stream;
  if (request.stop_sequences?.length) chat.stop = request.stop_sequences;
  if (request.temperature !== undefined) chat.temperature = request.temperature;
  if (request.top_p !== undefined) chat.top_p = request.top_p;
  if (request.tools?.length) chat.tools = request.tools.map((tool, index) => convertTool(tool, index, target));
  if (request.tool_choice) Object.assign(chat, convertToolChoice(request.tool_choice));
  if (target.anthropic) {
    for (const key of ANTHROPIC_ONLY_KEYS) if (request[key] !== undefined) chat[key] = request[key];
    if (typeof request.metadata?.user_id === "string") chat.user = request.metadata.user_id;
    if (target.betas) chat.anthropic_beta = target.betas;
  } else {
    for (const [key, why] of Object.entries(REFUSED_ELSEWHERE))
      if (request[key] !== undefined) throw refused(key, `'${key}' is not supported on this route: ${why}, and '${request.model}' is not an Anthropic route`);
    const reasoning = reasoningControls(request);
    if (reasoning) chat.model_options = { reasoning };
  }
  return chat;
}

/**
 * `thinking` (and `output_config.effort`) as the route's reasoning controls:
 * disabled → off; enabled → on, the effort from `budget_tokens` (below 4,096
 * low, below 16,384 medium, else high: the budgets the anthropic plugin
 * sends for those efforts); adaptive → on, the effort `output_config` names.
 * Absent, the route's default stands (a reasoning model reasons).
 */
function reasoningControls(request: MessagesRequest): { enabled?: boolean; effort?: string } | undefined {
  const effort = request.output_config?.effort;
  switch (request.thinking?.type) {
    case "disabled":
      return { enabled: false };
    case "enabled": {
      const budget = request.thinking.budget_tokens;
      return { enabled: true, effort: effort ?? (budget < 4096 ? "low" : budget < 16384 ? "medium" : "high") };
    }
    case "adaptive":
      return effort ? { enabled: true, effort } : { enabled: true };
    default:
      return effort ? { effort } : undefined;
  }
}

/**
 * The top-level `system`, or a `system` message inside `messages`, as a
 * system message in its place: an OpenAI-style host reads it there; a host
 * that takes one system prompt only merges them in order (its plugin does).
 */
function systemMessage(system: MessagesRequest["system"], target: ConversionTarget): ChatMessage | undefined {
  if (system === undefined) return undefined;
  if (typeof system === "string") return system ? { role: "system", content: system } : undefined;
  if (system.length === 0) return undefined;
  // an Anthropic route gets the blocks with their cache_control; elsewhere one text, as every OpenAI-style host reads it
  if (target.anthropic) return { role: "system", content: system.map(textPart) };
  return { role: "system", content: system.map((block) => shown(block.text)).join("\n\n") };
}

function convertMessage(message: AnthropicMessage, index: number, target: ConversionTarget): ChatMessage[] {
  if (message.role === "system") {
    const system = systemMessage(message.content, target);
    return system ? [system] : [];
  }
  const blocks: ContentBlock[] = typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
  return message.role === "assistant" ? [assistantMessage(blocks, index)] : userMessages(blocks, index, target);
}

/**
 * An assistant message: its text, and its tool_use blocks as tool calls.
 * Its thinking and redacted_thinking blocks are not converted: the turn's
 * carriers come from their signature (openThinkingSignatures) or from the
 * store, never from the text a client sends back.
 */
function assistantMessage(blocks: ContentBlock[], index: number): ChatMessage {
  let text = "";
  const toolCalls: ToolCall[] = [];
  blocks.forEach((block, position) => {
    switch (block.type) {
      case "text":
        text += shown(block.text);
        break;
      case "tool_use":
        toolCalls.push({ id: shown(block.id), type: "function", function: { name: shown(block.name), arguments: JSON.stringify(block.input ?? {}) } });
        break;
      case "thinking":
      case "redacted_thinking":
        break;
      default:
        throw refused(
          `messages.${index}.content.${position}.type`,
          `content block type '${block.type}' is not supported in an assistant message on this route`,
        );
    }
  });
  const message: ChatMessage = { role: "assistant", content: text || (toolCalls.length > 0 ? null : "") };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return message;
}

/**
 * A user message: its tool results first, one `tool` message each (OpenAI
 * wants them right after the calls), then the rest as one user message.
 * Images a tool result holds follow in a user message of their own, since
 * an OpenAI tool message carries text only.
 */
function userMessages(blocks: ContentBlock[], index: number, target: ConversionTarget): ChatMessage[] {
  const out: ChatMessage[] = [];
  const parts: JsonObject[] = [];
  const toolImages: JsonObject[] = [];
  blocks.forEach((block, position) => {
    const at = `messages.${index}.content.${position}`;
    if (block.type === "tool_result") {
      const content: ContentBlock[] =
        typeof block.content === "string" ? [{ type: "text", text: block.content }] : ((block.content as ContentBlock[] | undefined) ?? []);
      const texts: string[] = [];
      content.forEach((inner, innerPosition) => {
        const part = userPart(inner, `${at}.content.${innerPosition}`, target);
        if (part.type === "text") texts.push(shown(part.text));
        else toolImages.push(part);
      });
      out.push({ role: "tool", tool_call_id: shown(block.tool_use_id), content: toolResultText(texts.join("\n"), block.is_error === true) });
    } else parts.push(userPart(block, at, target));
  });
  const all = [...toolImages, ...parts];
  if (all.length === 0) return out;
  const onlyText = all.every((part) => part.type === "text" && part.cache_control === undefined);
  out.push({ role: "user", content: onlyText ? all.map((part) => shown(part.text)).join("\n\n") : all });
  return out;
}

/**
 * A tool result's text for a target with no error flag on tool messages
 * (every OpenAI-style host): `is_error` folded into the text, so the model
 * still reads that the call failed.
 */
function toolResultText(text: string, isError: boolean): string {
  return isError ? `Error: ${text}` : text;
}

/** A text, image or document block as a canonical content part. */
function userPart(block: ContentBlock, at: string, target: ConversionTarget): JsonObject {
  switch (block.type) {
    case "text":
      return withCache({ type: "text", text: shown(block.text) }, block, target);
    case "image": {
      const source = block.source as JsonObject;
      if (source.type === "base64")
        return withCache({ type: "image_url", image_url: { url: `data:${shown(source.media_type)};base64,${shown(source.data)}` } }, block, target);
      if (source.type === "url") return withCache({ type: "image_url", image_url: { url: shown(source.url) } }, block, target);
      throw refused(`${at}.source.type`, `image source type '${shown(source.type)}' is not supported: send the image as base64 or a URL`);
    }
    case "document": {
      const source = block.source as JsonObject;
      if (source.type === "base64")
        return withCache(
          {
            type: "file",
            file: { file_data: `data:${shown(source.media_type)};base64,${shown(source.data)}`, filename: shown(block.title ?? "document.pdf") },
          },
          block,
          target,
        );
      if (source.type === "text") return withCache({ type: "text", text: shown(source.data) }, block, target);
      if (source.type === "content" && Array.isArray(source.content))
        return { type: "text", text: (source.content as JsonObject[]).map((inner) => (inner.type === "text" ? shown(inner.text) : "")).join("\n") };
      throw refused(`${at}.source.type`, `document source type '${shown(source.type)}' is not supported: send the document as base64 or text`);
    }
    default:
      throw refused(`${at}.type`, `content block type '${block.type}' is not supported in a user message`);
  }
}

function textPart(block: JsonObject): JsonObject {
  const part: JsonObject = { type: "text", text: shown(block.text) };
  if (block.cache_control !== undefined) part.cache_control = block.cache_control;
  return part;
}

/** cache_control goes with a part only to an Anthropic route; other hosts cache by themselves, and strict ones refuse unknown keys. */
function withCache(part: JsonObject, block: JsonObject, target: ConversionTarget): JsonObject {
  if (target.anthropic && block.cache_control !== undefined) part.cache_control = block.cache_control;
  return part;
}

/**
 * A custom tool (`name`, `description`, `input_schema`) as an OpenAI function
 * tool. An Anthropic route gets every tool as sent (the anthropic plugin
 * passes Anthropic-shaped tools through, cache_control and server tools
 * included); elsewhere a server tool (`web_search_…`, `bash_…`) is refused.
 */
function convertTool(tool: AnthropicTool, index: number, target: ConversionTarget): JsonObject {
  if (target.anthropic) return tool;
  if (tool.type !== undefined && tool.type !== "custom")
    throw refused(`tools.${index}.type`, `tool type '${shown(tool.type)}' is one of Anthropic's server tools, which only an Anthropic route runs`);
  const fn: JsonObject = { name: tool.name, parameters: tool.input_schema ?? { type: "object", properties: {} } };
  if (typeof tool.description === "string") fn.description = tool.description;
  return { type: "function", function: fn };
}

function convertToolChoice(choice: NonNullable<MessagesRequest["tool_choice"]>): JsonObject {
  const out: JsonObject = {};
  if (choice.type === "auto") out.tool_choice = "auto";
  else if (choice.type === "any") out.tool_choice = "required";
  else if (choice.type === "none") out.tool_choice = "none";
  else out.tool_choice = { type: "function", function: { name: choice.name ?? "" } };
  if (choice.disable_parallel_tool_use === true && choice.type !== "none") out.parallel_tool_calls = false;
  return out;
}

function refused(param: string, message: string): GatewayError {
  return new GatewayError("invalid_request", message, param);
}

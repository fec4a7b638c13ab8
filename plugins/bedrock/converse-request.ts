import {
  type ChatMessage,
  type ChatRequest,
  type Json,
  type JsonObject,
  parseToolArguments,
  readObject,
  readString,
  textOf,
  type UpstreamCall,
} from "../../src/providers/plugin-api.js";
import { readLayout, rebuildTurn, type RedactedThinkingBlock, type ThinkingBlock } from "../anthropic/content-layout.js";
import { THINKING_BUDGETS } from "../anthropic/request-body.js";
import { replayPolicy, type ReplayPolicy } from "./replay-policy.js";

/** Converse request keys a route may set through `models[].params`; already in place at the top level. */
const NATIVE_KEYS = [
  "additionalModelRequestFields",
  "guardrailConfig",
  "performanceConfig",
  "promptVariables",
  "requestMetadata",
  "additionalModelResponseFieldPaths",
];

/**
 * The canonical request as a Converse / ConverseStream body (the model goes
 * into the URL). `dropRedacted` leaves out redacted reasoning: the one-time
 * fallback when Bedrock refuses it (as hermes-agent does, https://github.com/NousResearch/hermes-agent, `agent/bedrock_adapter.py`).
 */
export function buildConverseBody(call: UpstreamCall, options: { dropRedacted?: boolean } = {}): JsonObject {
  const source = call.body;
  const policy = replayPolicy(call);
  const dropRedacted = options.dropRedacted === true;
  const messages: ConverseMessage[] = [];
  const body: JsonObject = { messages };
  const system: JsonObject[] = [];
  // the turn in flight (after the last user message) is a tool loop: its reasoning goes back verbatim whatever the policy
  const lastUser = source.messages.findLastIndex((message) => message.role === "user");
  source.messages.forEach((message, index) => {
    if (message.role === "system" || message.role === "developer") {
      const text = textOf(message.content);
      if (text) system.push({ text });
    } else if (message.role === "user") {
      push(messages, "user", userBlocks(message.content));
    } else if (message.role === "tool") {
      const text = textOf(message.content);
      push(messages, "user", [{ toolResult: { toolUseId: message.tool_call_id ?? "", content: [{ text: text || " " }] } }]);
    } else if (message.role === "assistant") {
      push(messages, "assistant", assistantBlocks(message, index > lastUser ? "signed" : policy, dropRedacted));
    }
  });
  if (system.length > 0) body.system = system;

  // routes.yaml params may set inferenceConfig; the client's OpenAI fields win over it
  const inference: JsonObject = { ...readObject(source.inferenceConfig) };
  const maxTokens = source.max_completion_tokens ?? source.max_tokens;
  if (typeof maxTokens === "number") inference.maxTokens = maxTokens;
  if (typeof source.temperature === "number") inference.temperature = source.temperature;
  if (typeof source.top_p === "number") inference.topP = source.top_p;
  if (typeof source.stop === "string") inference.stopSequences = [source.stop];
  else if (Array.isArray(source.stop)) inference.stopSequences = source.stop.filter((sequence) => typeof sequence === "string"); // strings, as the request schema says
  if (Object.keys(inference).length > 0) body.inferenceConfig = inference;

  const toolConfig = convertTools(source.tools, source.tool_choice);
  if (toolConfig) body.toolConfig = toolConfig;
  for (const key of NATIVE_KEYS) if (source[key] !== undefined) body[key] = source[key] as Json;
  applyThinking(body, call);
  return body;
}

/** One entry of Converse's `messages`, as built here. */
type ConverseMessage = { role: "user" | "assistant"; content: JsonObject[] };

/** Converse merges nothing itself: consecutive same-role messages (parallel tool results) share one message. */
function push(messages: ConverseMessage[], role: ConverseMessage["role"], content: JsonObject[]): void {
  if (content.length === 0) return;
  const previous = messages.at(-1);
  if (previous?.role === role) previous.content.push(...content);
  else messages.push({ role, content });
}

function assistantBlocks(message: ChatMessage, policy: ReplayPolicy, dropRedacted: boolean): JsonObject[] {
  return rebuildTurn<JsonObject>(message, readLayout(message.native_record), {
    reasoning: (block) => (dropRedacted && block.type === "redacted_thinking" ? undefined : reasoningBlock(block, policy)),
    text: (text) => ({ text }),
    toolUse: (call) => ({ toolUse: { toolUseId: call.id, name: call.function.name, input: parseToolArguments(call.function.arguments) } }),
  });
}

/** A stored Anthropic-format block as `reasoningContent`, as far as the policy allows. */
function reasoningBlock(block: ThinkingBlock | RedactedThinkingBlock, policy: ReplayPolicy): JsonObject | undefined {
  if (policy === "stripped") return undefined;
  if (block.type === "redacted_thinking") return policy === "signed" ? { reasoningContent: { redactedContent: block.data } } : undefined;
  if (!block.thinking && policy !== "signed") return undefined;
  const reasoningText: JsonObject = { text: block.thinking };
  if (policy === "signed" && block.signature) reasoningText.signature = block.signature;
  return { reasoningContent: { reasoningText } };
}

function userBlocks(content: ChatMessage["content"]): JsonObject[] {
  if (!Array.isArray(content)) {
    const text = textOf(content);
    return text ? [{ text }] : [];
  }
  const blocks: JsonObject[] = [];
  for (const part of content) {
    if (part.type === "text" && typeof part.text === "string" && part.text) blocks.push({ text: part.text });
    else if (part.type === "image_url") {
      const url = typeof part.image_url === "string" ? part.image_url : readString(readObject(part.image_url)?.url);
      const data = typeof url === "string" ? /^data:image\/([a-z]+);base64,(.*)$/s.exec(url) : null;
      // Converse takes image bytes only (base64 in JSON); a remote URL cannot be passed on
      if (data) blocks.push({ image: { format: data[1] === "jpg" ? "jpeg" : data[1], source: { bytes: data[2] } } });
    }
  }
  return blocks;
}

/** OpenAI tools → `toolConfig`. Converse requires it whenever the history holds tool blocks, so tools always go. */
function convertTools(tools: ChatRequest["tools"], choice: unknown): JsonObject | undefined {
  if (!tools || tools.length === 0) return undefined;
  const specs: JsonObject[] = [];
  for (const tool of tools) {
    const fn = tool.type === "function" ? readObject(tool.function) : undefined;
    if (!fn) continue;
    const spec: JsonObject = { name: fn.name, inputSchema: { json: fn.parameters ?? { type: "object", properties: {} } } };
    if (typeof fn.description === "string") spec.description = fn.description;
    specs.push({ toolSpec: spec });
  }
  const config: JsonObject = { tools: specs };
  if (choice === "auto") config.toolChoice = { auto: {} };
  else if (choice === "required") config.toolChoice = { any: {} };
  else {
    const name = readObject(readObject(choice)?.function)?.name;
    if (typeof name === "string") config.toolChoice = { tool: { name } };
  }
  return config;
}

/**
 * Reasoning controls (docs/api.md#reasoning-controls-both-apis): Claude takes Anthropic's `thinking` in
 * `additionalModelRequestFields` (max tokens kept above the budget), Nova 2
 * takes `reasoningConfig`; others get what routes.yaml params say.
 */
function applyThinking(body: JsonObject, call: UpstreamCall): void {
  const effort = call.reasoning.effort?.toLowerCase();
  const extra: JsonObject = { ...readObject(body.additionalModelRequestFields) };
  const claude = /claude/i.test(call.model);
  if (!call.reasoning.enabled || effort === "none") {
    delete extra.thinking;
    delete extra.reasoningConfig;
  } else if (effort && claude && THINKING_BUDGETS[effort]) {
    extra.thinking = { type: "enabled", budget_tokens: THINKING_BUDGETS[effort] };
  } else if (effort && /nova/i.test(call.model)) {
    extra.reasoningConfig = { type: "enabled", maxReasoningEffort: effort === "minimal" ? "low" : effort === "xhigh" ? "high" : effort };
  }
  if (Object.keys(extra).length > 0) body.additionalModelRequestFields = extra;
  else delete body.additionalModelRequestFields;
  const thinking = readObject(extra.thinking);
  const budget = typeof thinking?.budget_tokens === "number" ? thinking.budget_tokens : undefined;
  if (budget !== undefined && thinking?.type === "enabled") {
    let inference = readObject(body.inferenceConfig);
    if (!inference) body.inferenceConfig = inference = {};
    const requested = typeof inference.maxTokens === "number" ? inference.maxTokens : 4096;
    if (requested <= budget) inference.maxTokens = budget + requested;
    // Anthropic refuses temperature / top_p changes with thinking on
    delete inference.temperature;
    delete inference.topP;
  }
}

import { type ChatMessage, type Json, type JsonObject, readObject, readString, textOf, type UpstreamCall } from "../../src/providers/plugin-api.js";
import { modelParts, readLayout } from "./parts-layout.js";
import { convertToolChoice, convertTools } from "./tools.js";

/** Gemini request keys a route may set through `models[].params` / `request_extra`; already in place at the top level. */
const NATIVE_KEYS = ["safetySettings", "cachedContent", "labels"];

/** `reasoning_effort` → `thinkingBudget` (Gemini 2.5). */
const THINKING_BUDGETS: Readonly<Record<string, number>> = { minimal: 128, low: 1024, medium: 8192, high: 24576, xhigh: 32768 };

/**
 * `reasoning_effort` → `thinkingLevel` (Gemini 3). The Pro models know only
 * LOW and HIGH, so the levels between round up there.
 */
function thinkingLevel(effort: string, model: string): string | undefined {
  const pro = /-pro/.test(model);
  switch (effort) {
    case "minimal":
      return pro ? "LOW" : "MINIMAL";
    case "low":
      return "LOW";
    case "medium":
      return pro ? "HIGH" : "MEDIUM";
    case "high":
    case "xhigh":
      return "HIGH";
    default:
      return undefined;
  }
}

/** Gemini 3 and later require signed function calls; 1.x and 2.x (and Gemma) predate thought-signature validation. */
export function validatesSignatures(model: string): boolean {
  return /gemini-/.test(model) && !/gemini-(1|2)([.-])/.test(model);
}

/** The canonical request as a `generateContent` body. */
export function buildGenerateBody(call: UpstreamCall, log: { readonly skipped: (name: string) => void }): JsonObject {
  const source = call.body;
  const { system, contents } = convertMessages(source.messages, validatesSignatures(call.model), log);
  const body: JsonObject = { contents };
  if (system.length > 0) {
    // role "user" as Google's own SDKs send it (recorded traffic)
    body.systemInstruction = { parts: system, role: "user" };
  }
  const generationConfig: JsonObject = isObject(source.generationConfig) ? { ...source.generationConfig } : {};
  const maxTokens = source.max_completion_tokens ?? source.max_tokens;
  if (typeof maxTokens === "number") generationConfig.maxOutputTokens = maxTokens;
  if (typeof source.temperature === "number") generationConfig.temperature = source.temperature;
  if (typeof source.top_p === "number") generationConfig.topP = source.top_p;
  if (typeof source.seed === "number") generationConfig.seed = source.seed;
  if (typeof source.presence_penalty === "number") generationConfig.presencePenalty = source.presence_penalty;
  if (typeof source.frequency_penalty === "number") generationConfig.frequencyPenalty = source.frequency_penalty;
  if (typeof source.stop === "string") generationConfig.stopSequences = [source.stop];
  else if (Array.isArray(source.stop)) generationConfig.stopSequences = source.stop.filter((sequence) => typeof sequence === "string"); // strings, as the request schema says
  const format = readObject(source.response_format);
  if (format?.type === "json_object") generationConfig.responseMimeType = "application/json";
  else if (format?.type === "json_schema") {
    generationConfig.responseMimeType = "application/json";
    const schema = readObject(format.json_schema)?.schema;
    if (schema) generationConfig.responseJsonSchema = schema;
  }
  // token log probabilities: the chosen tokens', and as many alternatives per token as top_logprobs asks
  if (source.logprobs === true) {
    generationConfig.responseLogprobs = true;
    if (typeof source.top_logprobs === "number" && source.top_logprobs > 0) generationConfig.logprobs = source.top_logprobs;
  }
  applyThinking(generationConfig, call);
  if (Object.keys(generationConfig).length > 0) body.generationConfig = generationConfig;
  const toolConfig = isObject(source.toolConfig) ? source.toolConfig : convertToolChoice(source.tool_choice);
  if (toolConfig) body.toolConfig = toolConfig;
  const tools = convertTools(source.tools);
  if (tools) body.tools = tools;
  for (const key of NATIVE_KEYS) if (source[key] !== undefined) body[key] = source[key] as Json;
  return body;
}

/**
 * The request's reasoning controls as `thinkingConfig` (docs/api.md#reasoning-controls-both-apis). An effort
 * becomes a level (Gemini 3) or a budget (2.5) and turns on thought summaries
 * so the reasoning can stream; without one, routes.yaml `params` decide.
 * Reasoning off asks for no summaries (and no thinking where a model can skip it).
 */
function applyThinking(config: JsonObject, call: UpstreamCall): void {
  const thinking: JsonObject = isObject(config.thinkingConfig) ? { ...config.thinkingConfig } : {};
  const effort = call.reasoning.effort?.toLowerCase();
  if (!call.reasoning.enabled || effort === "none") {
    thinking.includeThoughts = false;
    if (/gemini-2\.5-flash/.test(call.model)) thinking.thinkingBudget = 0;
  } else if (effort) {
    if (validatesSignatures(call.model)) {
      const level = thinkingLevel(effort, call.model);
      if (level) {
        thinking.thinkingLevel = level;
        delete thinking.thinkingBudget;
      }
    } else if (THINKING_BUDGETS[effort] !== undefined) {
      thinking.thinkingBudget = THINKING_BUDGETS[effort]!;
    }
    thinking.includeThoughts = true;
  } else if (!config.thinkingConfig) return;
  config.thinkingConfig = thinking;
}

/** One entry of `contents`, as built here. */
type GeminiContent = { role: "user" | "model"; parts: JsonObject[] };

/** OpenAI messages → `systemInstruction` parts + `contents`. */
function convertMessages(
  messages: readonly ChatMessage[],
  needsSignature: boolean,
  log: { readonly skipped: (name: string) => void },
): { system: JsonObject[]; contents: GeminiContent[] } {
  const system: JsonObject[] = [];
  const contents: GeminiContent[] = [];
  const calls = new Map<string, { name: string; withId: boolean }>();
  for (const message of messages) {
    if (message.role === "system" || message.role === "developer") {
      const text = textOf(message.content);
      if (text) system.push({ text });
    } else if (message.role === "user") {
      contents.push({ role: "user", parts: userParts(message.content) });
    } else if (message.role === "assistant") {
      const parts = modelParts(message, readLayout(message.native_record), needsSignature, log.skipped);
      for (const call of message.tool_calls ?? []) {
        const sent = parts.find((part) => readObject(part.functionCall)?.id === call.id);
        calls.set(call.id, { name: call.function.name, withId: sent !== undefined });
      }
      if (parts.length > 0) contents.push({ role: "model", parts });
    } else if (message.role === "tool") {
      const call = calls.get(message.tool_call_id ?? "");
      const functionResponse: JsonObject = { name: call?.name ?? message.name ?? "", response: { result: textOf(message.content) } };
      if (call?.withId) functionResponse.id = message.tool_call_id!;
      // the responses to one model turn's calls travel together in one user content
      const previous = contents.at(-1);
      if (previous?.role === "user" && previous.parts.every((part) => part.functionResponse)) previous.parts.push({ functionResponse });
      else contents.push({ role: "user", parts: [{ functionResponse }] });
    }
  }
  return { system, contents };
}

function userParts(content: ChatMessage["content"]): JsonObject[] {
  if (!Array.isArray(content)) return [{ text: textOf(content) }];
  const parts: JsonObject[] = [];
  for (const part of content) {
    if (part.type === "text" && typeof part.text === "string") parts.push({ text: part.text });
    else if (part.type === "image_url") {
      const url = typeof part.image_url === "string" ? part.image_url : readString(readObject(part.image_url)?.url);
      if (typeof url !== "string") continue;
      const data = /^data:([^;,]+);base64,(.*)$/s.exec(url);
      parts.push(data ? { inlineData: { mimeType: data[1], data: data[2] } } : { fileData: { fileUri: url } });
    } else if (part.type === "file") {
      // a file sent inline (a base64 data URL, a PDF as OpenAI takes it) is inline data to Gemini
      const data = /^data:([^;,]+);base64,(.*)$/s.exec(readString(readObject(part.file)?.file_data) ?? "");
      if (data) parts.push({ inlineData: { mimeType: data[1], data: data[2] } });
    }
  }
  return parts;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

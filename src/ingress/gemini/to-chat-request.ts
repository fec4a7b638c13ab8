import { GatewayError } from "../../foundation/errors/gateway-error.js";
import type { ChatMessage, ChatRequest, JsonObject, ToolCall } from "../../providers/contract.js";
import type { FunctionDeclaration, GeminiContent, GeminiPart, GenerateContentRequest, GenerationConfig } from "./request.js";

/** What the conversion needs to know of the route the request goes to. */
export interface ConversionTarget {
  /** The route speaks the Gemini API itself (the gemini plugin): `generationConfig`, `toolConfig` and Google's own keys go on as sent. */
  readonly gemini: boolean;
  /**
   * The request is carried to the route as sent (docs/architecture.md#two-paths):
   * the turn request is only what carrierd reads of it (its contents, for
   * sessions and replay), so a part or tool it does not read is passed over,
   * not refused; Gemini judges it.
   */
  readonly carried?: boolean;
}

/** Top-level keys only the Gemini API knows, passed on to a Gemini route (the gemini plugin sends them as they are). */
const GEMINI_ONLY_KEYS = ["generationConfig", "toolConfig", "safetySettings", "cachedContent", "labels"] as const;

/** `thinkingBudget` → effort, with the budgets the gemini plugin sends for each effort (2.5's). */
function effortOfBudget(budget: number): string {
  return budget <= 1024 ? "low" : budget <= 8192 ? "medium" : "high";
}

/**
 * A Gemini request as the gateway's canonical turn request (OpenAI chat
 * completions): systemInstruction and contents as messages, function
 * declarations as function tools, generationConfig in the names every plugin
 * reads. docs/api.md#gemini-api lists what maps to what on each kind of
 * route. Each `model` content becomes exactly one assistant message, so an
 * envelope found in its parts belongs to that message's index.
 */
export function toChatRequest(model: string, request: GenerateContentRequest, target: ConversionTarget, stream: boolean): ChatRequest {
  const messages: ChatMessage[] = [];
  const system = request.systemInstruction?.parts.map((part) => part.text ?? "").join("\n");
  if (system) messages.push({ role: "system", content: system });
  const calls = new CallIds();
  const strict = target.carried !== true;
  request.contents.forEach((content, index) => messages.push(...convertContent(content, index, calls, strict)));
  const chat: ChatRequest = { model, messages };
  if (stream) chat.stream = true;
  const tools = convertTools(request.tools, strict);
  if (tools) chat.tools = tools;
  const config = request.generationConfig ?? {};
  if (target.gemini) {
    for (const key of GEMINI_ONLY_KEYS) if (request[key] !== undefined) chat[key] = request[key];
    return chat;
  }
  if (request.cachedContent !== undefined)
    throw refused("cachedContent", `'cachedContent' names a cache inside Google's API, and '${model}' is not a Gemini route`);
  if (config.candidateCount !== undefined && config.candidateCount > 1)
    throw refused("generationConfig.candidateCount", "only one candidate can be asked for on this route");
  if (config.maxOutputTokens !== undefined) chat.max_tokens = config.maxOutputTokens;
  if (config.temperature !== undefined) chat.temperature = config.temperature;
  if (config.topP !== undefined) chat.top_p = config.topP;
  if (config.seed !== undefined) chat.seed = config.seed;
  if (config.presencePenalty !== undefined) chat.presence_penalty = config.presencePenalty;
  if (config.frequencyPenalty !== undefined) chat.frequency_penalty = config.frequencyPenalty;
  if (config.stopSequences?.length) chat.stop = config.stopSequences;
  const format = responseFormat(config);
  if (format) chat.response_format = format;
  const choice = request.toolConfig?.functionCallingConfig;
  if (choice) Object.assign(chat, convertToolChoice(choice));
  const reasoning = reasoningControls(config);
  if (reasoning) chat.model_options = { reasoning };
  return chat;
}

/** Whether the client asked to see the model's thoughts (`thinkingConfig.includeThoughts`): without it, Gemini sends none. */
export function includesThoughts(request: GenerateContentRequest): boolean {
  return request.generationConfig?.thinkingConfig?.includeThoughts === true;
}

/**
 * `thinkingConfig` as the route's reasoning controls: a budget of 0 turns
 * reasoning off; a level (LOW, MEDIUM, HIGH, MINIMAL) or a budget is the
 * effort. Absent, the route's default stands.
 */
function reasoningControls(config: GenerationConfig): { enabled?: boolean; effort?: string } | undefined {
  const thinking = config.thinkingConfig;
  if (!thinking) return undefined;
  if (thinking.thinkingBudget === 0) return { enabled: false };
  if (typeof thinking.thinkingLevel === "string" && thinking.thinkingLevel !== "THINKING_LEVEL_UNSPECIFIED")
    return { enabled: true, effort: thinking.thinkingLevel.toLowerCase() };
  if (typeof thinking.thinkingBudget === "number" && thinking.thinkingBudget > 0) return { enabled: true, effort: effortOfBudget(thinking.thinkingBudget) };
  return undefined;
}

/** `responseMimeType: application/json` with a schema → the target's JSON-schema mode; without one → JSON mode. */
function responseFormat(config: GenerationConfig): JsonObject | undefined {
  if (config.responseMimeType !== "application/json") return undefined;
  const schema = config.responseJsonSchema ?? config.responseSchema;
  if (!schema) return { type: "json_object" };
  return { type: "json_schema", json_schema: { name: "response", schema: jsonSchemaOf(schema) } };
}

/**
 * Gemini's `Schema` (OpenAPI 3.0: upper-case types, `nullable`) as JSON
 * Schema, which every other host reads; a JSON Schema passes unchanged
 * (its types are lower-case already). Gemini CLI sends upper-case types
 * even in `responseJsonSchema`.
 */
export function jsonSchemaOf(schema: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "type" && typeof value === "string") out.type = value.toLowerCase();
    else if (key === "nullable") continue;
    else if (key === "properties" && isObject(value))
      out.properties = Object.fromEntries(Object.entries(value).map(([name, inner]) => [name, isObject(inner) ? jsonSchemaOf(inner) : inner]));
    else if ((key === "items" || key === "additionalProperties") && isObject(value)) out[key] = jsonSchemaOf(value);
    else if ((key === "anyOf" || key === "oneOf" || key === "allOf") && Array.isArray(value))
      out[key] = value.map((inner) => (isObject(inner) ? jsonSchemaOf(inner) : inner));
    else out[key] = value;
  }
  if (schema.nullable === true && typeof out.type === "string") out.type = [out.type, "null"];
  return out;
}

/**
 * The ids of the calls a conversation makes, so a function response finds
 * its call: by `id` when both have one, else the oldest unanswered call of
 * that name. A call sent without an id gets one made of its place.
 */
class CallIds {
  private readonly open: { id: string; name: string }[] = [];

  called(id: string | undefined, name: string, at: string): string {
    const callId = id || `call_${at}`;
    this.open.push({ id: callId, name });
    return callId;
  }

  answered(id: string | undefined, name: string, at: string): string {
    const index = this.open.findIndex((call) => (id ? call.id === id : call.name === name));
    if (index < 0) return id || `call_${at}`;
    return this.open.splice(index, 1)[0].id;
  }
}

function convertContent(content: GeminiContent, index: number, calls: CallIds, strict: boolean): ChatMessage[] {
  return content.role === "model" ? [modelMessage(content.parts, index, calls, strict)] : userMessages(content.parts, index, calls, strict);
}

/**
 * A model content: its text, and its function calls as tool calls. Thought
 * parts are not converted: the turn's carriers come from its
 * thoughtSignature (an envelope) or from the store, never from the text a
 * client sends back.
 */
function modelMessage(parts: GeminiPart[], index: number, calls: CallIds, strict: boolean): ChatMessage {
  let text = "";
  const toolCalls: ToolCall[] = [];
  parts.forEach((part, position) => {
    if (part.thought === true) return;
    if (part.functionCall) {
      const call = part.functionCall;
      const id = calls.called(call.id, call.name, `${index}_${position}`);
      toolCalls.push({ id, type: "function", function: { name: call.name, arguments: JSON.stringify(call.args ?? {}) } });
    } else if (typeof part.text === "string") text += part.text;
    else if (part.thoughtSignature === undefined && strict)
      throw refused(`contents[${index}].parts[${position}]`, "a model content's parts may hold text and function calls only on this route");
  });
  const message: ChatMessage = { role: "assistant", content: text || (toolCalls.length > 0 ? null : "") };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return message;
}

/**
 * A user (or function) content: its function responses first, one `tool`
 * message each (OpenAI wants them right after the calls), then the rest as
 * one user message.
 */
function userMessages(parts: GeminiPart[], index: number, calls: CallIds, strict: boolean): ChatMessage[] {
  const out: ChatMessage[] = [];
  const rest: JsonObject[] = [];
  parts.forEach((part, position) => {
    const at = `contents[${index}].parts[${position}]`;
    if (part.functionResponse) {
      const answer = part.functionResponse;
      out.push({ role: "tool", tool_call_id: calls.answered(answer.id, answer.name, `${index}_${position}`), content: responseText(answer.response) });
    } else if (typeof part.text === "string") {
      if (part.thought !== true) rest.push({ type: "text", text: part.text });
    } else if (!strict) {
      return; // carried: the turn reads text and function responses; the rest goes upstream in the client's bytes
    } else if (part.inlineData) {
      rest.push(dataPart(part.inlineData.mimeType, `data:${part.inlineData.mimeType};base64,${part.inlineData.data}`, at));
    } else if (part.fileData) {
      rest.push(dataPart(part.fileData.mimeType ?? "", part.fileData.fileUri, at));
    } else throw refused(at, "a user content's parts may hold text, inlineData, fileData and function responses on this route");
  });
  if (rest.length === 0) return out;
  const onlyText = rest.every((part) => part.type === "text");
  out.push({ role: "user", content: onlyText ? rest.map((part) => part.text as string).join("\n") : rest });
  return out;
}

/** An image as an image part, a PDF as a file part (as the Messages door sends documents). */
function dataPart(mimeType: string, url: string, at: string): JsonObject {
  if (mimeType === "application/pdf") return { type: "file", file: { file_data: url, filename: "document.pdf" } };
  if (mimeType.startsWith("image/") || mimeType === "") return { type: "image_url", image_url: { url } };
  throw refused(`${at}.mimeType`, `data of type '${mimeType}' is not supported on this route: send images or PDFs`);
}

/**
 * A function response as a tool message's text: the one string it holds
 * (`{output: "…"}` as Gemini CLI answers, `{result: "…"}` as the SDKs'
 * examples do), else its JSON.
 */
function responseText(response: JsonObject | undefined): string {
  if (!response) return "";
  const keys = Object.keys(response);
  if (keys.length === 1 && typeof response[keys[0]] === "string") return response[keys[0]] as string;
  return JSON.stringify(response);
}

/** Function declarations as OpenAI function tools; any other tool (Google Search, code execution) runs only inside Google's API. */
function convertTools(tools: GenerateContentRequest["tools"], strict: boolean): JsonObject[] | undefined {
  if (!tools?.length) return undefined;
  const out: JsonObject[] = [];
  tools.forEach((tool, index) => {
    for (const key of Object.keys(tool))
      if (key !== "functionDeclarations" && strict)
        throw refused(`tools[${index}].${key}`, `tool '${key}' runs inside Google's API; carrierd serves function declarations`);
    for (const declaration of tool.functionDeclarations ?? []) out.push(functionTool(declaration));
  });
  return out.length > 0 ? out : undefined;
}

function functionTool(declaration: FunctionDeclaration): JsonObject {
  const parameters = declaration.parametersJsonSchema ?? (declaration.parameters ? jsonSchemaOf(declaration.parameters) : { type: "object", properties: {} });
  const fn: JsonObject = { name: declaration.name, parameters };
  if (typeof declaration.description === "string") fn.description = declaration.description;
  return { type: "function", function: fn };
}

function convertToolChoice(config: { mode?: string; allowedFunctionNames?: string[] }): JsonObject {
  switch (config.mode) {
    case "NONE":
      return { tool_choice: "none" };
    case "ANY":
    case "VALIDATED":
      if (config.allowedFunctionNames?.length === 1) return { tool_choice: { type: "function", function: { name: config.allowedFunctionNames[0] } } };
      return { tool_choice: "required" };
    default:
      return config.mode === "AUTO" ? { tool_choice: "auto" } : {};
  }
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function refused(param: string, message: string): GatewayError {
  return new GatewayError("invalid_request", message, param);
}

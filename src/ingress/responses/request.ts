import { GatewayError } from "../../foundation/errors/gateway-error.js";
import type { ChatMessage, ChatRequest, JsonObject } from "../../providers/contract.js";
import { shown } from "../../foundation/util/shown.js";
import { NO_TOOLS, type UpstreamTools } from "./request-tools.js";
import responsesSchema from "../../../schemas/requests/responses.schema.json" with { type: "json" };
import { requestValidator } from "../request-schema.js";
import { noteMember, type RequestStrings } from "../request-strings.js";

/** POST /v1/responses body, as far as carrierd reads it (schemas/requests/responses.schema.json). */
export interface ResponsesRequest {
  model: string;
  input: string | unknown[];
  instructions?: string | null;
  stream?: boolean | null;
  store?: boolean | null;
  previous_response_id?: string | null;
  conversation?: string | { id: string } | null;
  tools?: JsonObject[];
  tool_choice?: string | JsonObject;
  parallel_tool_calls?: boolean | null;
  temperature?: number | null;
  top_p?: number | null;
  presence_penalty?: number | null;
  frequency_penalty?: number | null;
  truncation?: "auto" | "disabled" | null;
  prompt_cache_key?: string | null;
  safety_identifier?: string | null;
  max_output_tokens?: number | null;
  reasoning?: { effort?: string | null; summary?: string | null } | null;
  text?: { format?: JsonObject; verbosity?: string | null } | null;
  metadata?: JsonObject | null;
  user?: string;
  include?: string[] | null;
  background?: boolean | null;
  model_options?: ChatRequest["model_options"];
  [key: string]: unknown;
}

/** Checks a body against the Responses request schema; a 400 naming the parameter otherwise. */
export const validateResponsesRequest = requestValidator<ResponsesRequest>(responsesSchema, "input");

/** POST /v1/responses/compact body. */
export interface CompactRequest {
  model: string;
  previous_response_id: string;
  instructions?: string | null;
  input?: unknown;
}

export const validateCompactRequest = requestValidator<CompactRequest>({
  type: "object",
  required: ["model", "previous_response_id"],
  properties: {
    model: { type: "string", minLength: 1, maxLength: 256 },
    previous_response_id: { type: "string", minLength: 1, maxLength: 256 },
    instructions: { type: ["string", "null"] },
    input: { type: "null" },
  },
});

/**
 * The canonical chat request for one Responses call: `instructions` first
 * (they never carry over to a continued response, as in OpenAI's API), then
 * the stored history, then this input. Reasoning controls travel in
 * `model_options`, so every plugin receives them as `call.reasoning`.
 */
export function toChatRequest(
  body: ResponsesRequest,
  history: readonly ChatMessage[],
  input: readonly ChatMessage[],
  stream: boolean,
  tools: UpstreamTools = NO_TOOLS,
  strings?: RequestStrings,
): ChatRequest {
  const messages: ChatMessage[] = [];
  if (body.instructions) {
    const system: ChatMessage = { role: "system", content: body.instructions };
    // the instructions as the client sent them (request-strings.ts)
    if (strings)
      noteMember(
        strings,
        system,
        "content",
        strings.top.find((member) => member.key === "instructions"),
      );
    messages.push(system);
  }
  messages.push(...history, ...input);
  if (messages.length === 0) throw new GatewayError("invalid_request", "'input' must not be empty", "input");
  const request: ChatRequest = { model: body.model, messages, stream };
  if (tools.tools.length) request.tools = tools.tools;
  if (tools.toolChoice !== undefined) request.tool_choice = tools.toolChoice;
  if (typeof body.parallel_tool_calls === "boolean") request.parallel_tool_calls = body.parallel_tool_calls;
  if (typeof body.temperature === "number") request.temperature = body.temperature;
  if (typeof body.top_p === "number") request.top_p = body.top_p;
  if (typeof body.presence_penalty === "number") request.presence_penalty = body.presence_penalty;
  if (typeof body.frequency_penalty === "number") request.frequency_penalty = body.frequency_penalty;
  // OpenAI's chat name for it; the plugin spells it as its upstream reads it
  if (typeof body.max_output_tokens === "number") request.max_completion_tokens = body.max_output_tokens;
  if (typeof body.user === "string") request.user = body.user;
  const format = body.text?.format ? responseFormat(body.text.format) : undefined;
  if (format) request.response_format = format;
  const effort = body.model_options?.reasoning?.effort ?? body.reasoning?.effort ?? undefined;
  const summary = body.reasoning?.summary ?? undefined;
  if (body.model_options || effort || summary)
    request.model_options = {
      ...body.model_options,
      reasoning: { ...body.model_options?.reasoning, ...(effort ? { effort } : {}), ...(summary ? { summary } : {}) },
    };
  return request;
}

/**
 * The Responses request's members toChatRequest reads (into the chat
 * request, or for carrierd itself: the store, the chain, what the answer
 * includes); any other has no place in a chat request (docs/api.md#a-responses-client-on-a-chat-route).
 */
const READ_KEYS: ReadonlySet<string> = new Set([
  "model",
  "input",
  "instructions",
  "stream",
  "stream_options",
  "store",
  "include",
  "previous_response_id",
  "conversation",
  "metadata",
  "background",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "temperature",
  "top_p",
  "presence_penalty",
  "frequency_penalty",
  "max_output_tokens",
  "user",
  "text",
  "reasoning",
  "model_options",
]);

/** The request's members a chat request has no place for: said once per route and field, never refused (DroppedFields). */
export function droppedKeys(body: ResponsesRequest): string[] {
  const dropped = Object.keys(body).filter((key) => !READ_KEYS.has(key) && body[key] !== undefined && body[key] !== null);
  if (typeof body.text?.verbosity === "string") dropped.push("text.verbosity");
  return dropped;
}

function responseFormat(format: JsonObject): JsonObject | undefined {
  switch (format.type) {
    case "text":
      return undefined;
    case "json_object":
      return { type: "json_object" };
    case "json_schema": {
      const schema: JsonObject = { name: typeof format.name === "string" ? format.name : "response", schema: format.schema ?? {} };
      if (typeof format.strict === "boolean") schema.strict = format.strict;
      if (typeof format.description === "string") schema.description = format.description;
      return { type: "json_schema", json_schema: schema };
    }
    default:
      throw new GatewayError("invalid_request", `Invalid value for 'text.format.type': '${shown(format.type)}'.`, "text.format.type");
  }
}

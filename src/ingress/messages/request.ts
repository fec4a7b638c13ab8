import messagesSchema from "../../../schemas/requests/messages.schema.json" with { type: "json" };
import type { ErrorObject } from "ajv";
import { requestValidator } from "../request-schema.js";
import { GatewayError } from "../../foundation/errors/gateway-error.js";
import type { JsonObject } from "../../providers/contract.js";

/** A content block of a Messages request (text, image, document, tool_use, tool_result, thinking, redacted_thinking, …). */
export type ContentBlock = JsonObject & { type: string };

export interface AnthropicMessage {
  /** `system`: an instruction in its place in the conversation (Claude Code sends its environment notes so). */
  role: "user" | "assistant" | "system";
  content: string | ContentBlock[];
}

export interface AnthropicTool extends JsonObject {
  name: string;
}

/** `thinking`: Anthropic's reasoning switch. */
export type ThinkingSetting = ({ type: "enabled"; budget_tokens: number } | { type: "adaptive" } | { type: "disabled" }) & {
  /** `omitted`: thinking blocks come with their signature and no text. */
  display?: "summarized" | "omitted";
};

/** A POST /v1/messages body, as the schema (schemas/requests/messages.schema.json) accepts it. */
export interface MessagesRequest {
  model: string;
  max_tokens: number;
  messages: AnthropicMessage[];
  system?: string | ContentBlock[];
  stream?: boolean;
  stop_sequences?: string[];
  temperature?: number;
  top_p?: number;
  top_k?: number;
  metadata?: { user_id?: string | null };
  tools?: AnthropicTool[];
  tool_choice?: { type: "auto" | "any" | "tool" | "none"; name?: string; disable_parallel_tool_use?: boolean };
  thinking?: ThinkingSetting;
  output_config?: { effort?: string };
  [key: string]: unknown;
}

/** Checks a body against the Messages request schema; a 400 naming the parameter otherwise, worded as Anthropic words it. */
export const validateMessagesRequest = requestValidator<MessagesRequest>(messagesSchema, "messages", anthropicWording);

/** POST /v1/messages/count_tokens takes the same body, `max_tokens` left out. */
export const validateCountTokensRequest = requestValidator<MessagesRequest>(countTokensSchema(), "messages", anthropicWording);

/** JSON types as Anthropic's validation names them. */
const TYPE_NAMES: Readonly<Record<string, string>> = {
  string: "a valid string",
  integer: "a valid integer",
  number: "a valid number",
  boolean: "a valid boolean",
  array: "a valid list",
  object: "a valid dictionary",
  null: "None",
};

/**
 * A schema error as Anthropic's API words it (`messages.1.role: Input should
 * be 'user', 'assistant' or 'system'`, `max_tokens: Field required`): the
 * dotted path, then the reason. Clients that read the refusal (Claude Code
 * retries a request it recognises) read carrierd's the same way.
 */
function anthropicWording(error: ErrorObject, segments: readonly string[]): GatewayError {
  const missing = error.keyword === "required" ? String((error.params as { missingProperty: string }).missingProperty) : undefined;
  const path = (missing === undefined ? segments : [...segments, missing]).join(".");
  const params = error.params as Record<string, unknown>;
  let reason: string;
  switch (error.keyword) {
    case "required":
      reason = "Field required";
      break;
    case "enum":
      reason = `Input should be ${either((params.allowedValues as unknown[]).map((value) => `'${String(value)}'`))}`;
      break;
    case "const":
      reason = `Input should be '${String(params.allowedValue)}'`;
      break;
    case "type":
      // mostSpecific's message names every type the branches allowed ("must be string or array")
      reason = `Input should be ${either(
        (error.message ?? String(params.type))
          .replace(/^must be /, "")
          .split(/ or |,/)
          .map((type) => TYPE_NAMES[type.trim()] ?? type),
      )}`;
      break;
    case "minimum":
      reason = `Input should be greater than or equal to ${String(params.limit)}`;
      break;
    case "maximum":
      reason = `Input should be less than or equal to ${String(params.limit)}`;
      break;
    case "minLength":
      reason = `String should have at least ${String(params.limit)} character${params.limit === 1 ? "" : "s"}`;
      break;
    case "maxLength":
      reason = `String should have at most ${String(params.limit)} characters`;
      break;
    case "minItems":
      reason = `List should have at least ${String(params.limit)} item${params.limit === 1 ? "" : "s"}`;
      break;
    default:
      reason = error.message ?? "Input is invalid";
  }
  return new GatewayError("invalid_request", path ? `${path}: ${reason}` : reason, path || null);
}

/** `'a'`, `'a' or 'b'`, `'a', 'b' or 'c'`. */
function either(values: readonly string[]): string {
  return values.length <= 1 ? (values[0] ?? "") : `${values.slice(0, -1).join(", ")} or ${values.at(-1)!}`;
}

function countTokensSchema(): object {
  const { $id: _id, ...schema } = messagesSchema; // one schema per $id in the validator
  return { ...schema, required: ["model", "messages"] };
}

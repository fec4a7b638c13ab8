import messagesSchema from "../../../schemas/requests/messages.schema.json" with { type: "json" };
import { requestValidator } from "../request-schema.js";
import type { JsonObject } from "../../providers/contract.js";

/** A content block of a Messages request (text, image, document, tool_use, tool_result, thinking, redacted_thinking, …). */
export type ContentBlock = JsonObject & { type: string };

export interface AnthropicMessage {
  role: "user" | "assistant";
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

/** Checks a body against the Messages request schema; a 400 naming the parameter otherwise. */
export const validateMessagesRequest = requestValidator<MessagesRequest>(messagesSchema, "messages");

/** POST /v1/messages/count_tokens takes the same body, `max_tokens` left out. */
export const validateCountTokensRequest = requestValidator<MessagesRequest>(countTokensSchema(), "messages");

function countTokensSchema(): object {
  const { $id: _id, ...schema } = messagesSchema; // one schema per $id in the validator
  return { ...schema, required: ["model", "messages"] };
}

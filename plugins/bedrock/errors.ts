import { classifyAnthropicError } from "../anthropic/errors.js";

/**
 * Bedrock's unknown-field rejections (docs/plugins.md#6-the-error-classifier): a ValidationException whose
 * message relays the model's own "…: Extra inputs are not permitted"
 * ("The model returned the following errors: reasoning_effort: Extra inputs
 * are not permitted", https://github.com/crmne/ruby_llm/issues/851), or InvokeModel's schema check
 * "Malformed input request: #: extraneous key [reasoning_effort] is not permitted".
 */
const EXTRANEOUS_KEY = /extraneous key \[([^\]]+)\] is not permitted/;

export function classifyBedrockError(status: number, body: string): string | undefined {
  if (status < 400 || status > 499) return undefined;
  return EXTRANEOUS_KEY.exec(body)?.[1] ?? classifyAnthropicError(status, body);
}

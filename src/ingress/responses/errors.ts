import { toOpenAIError, type GatewayError } from "../../foundation/errors/gateway-error.js";
import type { JsonObject } from "../../providers/contract.js";
import type { FailureFrame } from "../first-byte-wait.js";
import { openAIErrorShape } from "../chat-completions/errors.js";

/** The Responses API answers errors as OpenAI's APIs do (docs/api.md#errors). */
export const responsesErrorShape = openAIErrorShape;

/**
 * The fields of a stream's `error` event. OpenAI's SDK types them at the
 * top level; the live API (and the Vercel AI SDK) nest them under `error`:
 * both are sent.
 */
export function errorEventFields(failure: GatewayError): JsonObject {
  const { error } = toOpenAIError(failure);
  const detail = { type: error.type, code: error.code, message: error.message, param: error.param };
  return { code: error.code, message: error.message, param: error.param, error: detail };
}

/** A stream that failed before its first event: an `error` event, shaped as the stream's own (stream.ts). */
export const responsesFailureFrame: FailureFrame = (failure) =>
  `event: error\ndata: ${JSON.stringify({ type: "error", sequence_number: 0, ...errorEventFields(failure) })}\n\n`;

import type { GatewayError } from "../../foundation/errors/gateway-error.js";
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
  const detail = { type: failure.type, code: failure.code, message: failure.message, param: failure.param };
  return { code: failure.code, message: failure.message, param: failure.param, error: detail };
}

/** A stream that failed before its first event: an `error` event, shaped as the stream's own (stream.ts). */
export const responsesFailureFrame: FailureFrame = (failure) =>
  `event: error\ndata: ${JSON.stringify({ type: "error", sequence_number: 0, ...errorEventFields(failure) })}\n\n`;

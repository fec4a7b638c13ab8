import { toOpenAIError, type GatewayError } from "../../foundation/errors/gateway-error.js";
import type { ErrorShape } from "../../http/respond.js";
import type { FailureFrame } from "../first-byte-wait.js";
import { redactText } from "../../foundation/logging/redact.js";

/**
 * OpenAI's `{"error":{message,type,param,code}}`, with carrierd's status:
 * the chat completions API's, the Responses API's, and the gateway's for a
 * path no endpoint serves (docs/api.md#errors).
 */
export const openAIErrorShape: ErrorShape = (error) => ({ status: error.status, body: toOpenAIError(error) });

/** A chat completions stream's error chunk: the error body as a `data:` line. */
export function errorChunk(error: GatewayError): string {
  return JSON.stringify(toOpenAIError(error));
}

/** A chat completions stream that failed: an error chunk, then `[DONE]`. */
export const chatFailureFrame: FailureFrame = (failure) => `data: ${errorChunk(failure)}\n\ndata: [DONE]\n\n`;

/**
 * A carried stream that failed (docs/api.md#carried-chat-completions): an
 * upstream refusal after the stream opened for keepalives is its own error
 * body as a `data:` event (each of its lines one `data:` line), then
 * `[DONE]`; any other failure is carrierd's error chunk. It opens with a
 * blank line: the upstream's bytes before it may end mid-line (an upstream
 * cut off by a deadline), and the event must not join that line.
 */
export const carriedChatFailureFrame: FailureFrame = (failure) =>
  failure.upstreamBody === undefined
    ? `\n\n${chatFailureFrame(failure)}`
    : `\n\ndata: ${redactText(failure.upstreamBody).replace(/\r?\n/g, "\ndata: ")}\n\ndata: [DONE]\n\n`;

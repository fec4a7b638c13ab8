import type { ServerResponse } from "node:http";
import { GatewayError, toOpenAIError } from "../errors/gateway-error.js";
import { noteError } from "../logging/access-log.js";

export function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  // encoded once: its length comes from the bytes, not from another pass over the string
  const bytes = Buffer.from(JSON.stringify(body));
  response.writeHead(status, { "content-type": "application/json", "content-length": bytes.length, ...headers });
  response.end(bytes);
}

/**
 * Any error becomes an OpenAI-shaped body; only a GatewayError chooses its
 * status, anything else is a 500 that is logged. The access-log line of the
 * request names the error's code and message.
 */
export function sendError(response: ServerResponse, error: unknown): void {
  const gatewayError = error instanceof GatewayError ? error : new GatewayError("internal_error", "internal error");
  noteError(response, gatewayError);
  if (response.writableEnded) return; // already told, in the stream it had opened (FirstByteWait)
  if (response.headersSent) {
    response.destroy();
    return;
  }
  // a refused body may still be arriving: close the connection rather than read it all
  const headers: Record<string, string> = { ...gatewayError.headers };
  if (gatewayError.status === 413) headers.connection = "close";
  sendJson(response, gatewayError.status, toOpenAIError(gatewayError), headers);
}

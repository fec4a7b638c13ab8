import type { ServerResponse } from "node:http";
import { GatewayError } from "../foundation/errors/gateway-error.js";
import { noteError } from "../foundation/logging/access-log.js";

export function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  // encoded once: its length comes from the bytes, not from another pass over the string
  const bytes = Buffer.from(JSON.stringify(body));
  response.writeHead(status, { "content-type": "application/json", "content-length": bytes.length, ...headers });
  response.end(bytes);
}

/**
 * How the wire API of an endpoint spells an error: its status and body.
 * Each ingress adapter has one; the HTTP layer uses the one of the endpoint
 * that was asked for, even for an error raised before its handler runs (a
 * refused key, a body over the limit).
 */
export type ErrorShape = (error: GatewayError) => { status: number; body: unknown };

/**
 * Any error becomes a body in `shape`; only a GatewayError chooses its
 * status, anything else is a 500 that is logged. The access-log line of the
 * request names the error's code and message.
 */
export function sendError(response: ServerResponse, error: unknown, shape: ErrorShape): void {
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
  const { status, body } = shape(gatewayError);
  sendJson(response, status, body, headers);
}

import type { IncomingMessage, ServerResponse } from "node:http";
import { GatewayError } from "../foundation/errors/gateway-error.js";
import { sendError, type ErrorShape } from "./respond.js";

const ALLOWED_METHODS = "GET, POST, DELETE, OPTIONS";
// x-api-key and the anthropic-* headers: Anthropic's browser SDK sends them to /v1/messages
const ALLOWED_HEADERS =
  "Authorization, Content-Type, X-Session-Id, Idempotency-Key, X-Api-Key, Anthropic-Version, Anthropic-Beta, Anthropic-Dangerous-Direct-Browser-Access";
// a browser client may read which hosted tools were left out (src/ingress/hosted-tools.ts)
const EXPOSED_HEADERS = "X-Session-Id, X-Carrierd-Tools-Omitted";

/**
 * CORS only for origins on the allowlist (`*` allows any). Returns
 * "answered" when the request was a preflight and has been answered (204 or 403).
 */
export function applyCors(request: IncomingMessage, response: ServerResponse, allowlist: readonly string[], errorShape: ErrorShape): "continue" | "answered" {
  const origin = request.headers.origin;
  const allowed = typeof origin === "string" && (allowlist.includes("*") || allowlist.includes(origin));
  // the answer depends on the origin either way, so a shared cache must not hand one origin's answer to another
  if (typeof origin === "string") response.setHeader("Vary", "Origin");
  if (allowed) {
    response.setHeader("Access-Control-Allow-Origin", origin);
    response.setHeader("Access-Control-Expose-Headers", EXPOSED_HEADERS);
  }
  if (request.method !== "OPTIONS") return "continue";
  if (!allowed) {
    sendError(response, new GatewayError("origin_not_allowed", "origin not allowed"), errorShape);
    return "answered";
  }
  response.writeHead(204, {
    "Access-Control-Allow-Methods": ALLOWED_METHODS,
    "Access-Control-Allow-Headers": ALLOWED_HEADERS,
    "Access-Control-Max-Age": "600",
  });
  response.end();
  return "answered";
}

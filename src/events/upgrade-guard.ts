import type { IncomingMessage } from "node:http";
import { bearerToken } from "../http/auth.js";
import { GatewayError } from "../foundation/errors/gateway-error.js";
import type { Caller } from "../http/keys/caller.js";
import type { Identification } from "../http/keys/key-ring.js";

export const EVENTS_PATH = "/v1/events";

export type UpgradeDecision =
  /** `caller` when the header authenticated it; without one the connection must authenticate by message. */
  | { accept: true; caller: Caller | undefined }
  | { accept: false; status: 401 | 403; code: "invalid_api_key" | "insufficient_scope" | "origin_not_allowed"; message: string };

/**
 * Decides an upgrade request on `GET /v1/events` before the WebSocket
 * handshake (docs/events.md#authenticating); upgrades elsewhere never reach it.
 * Browsers always send `Origin`: it must be on the CORS allowlist or be the
 * gateway's own origin (the built-in dashboard). A wrong key in the header is
 * refused with 401, a key without the `events` scope with 403; no header
 * at all is let through to authenticate by message, since browsers cannot
 * set headers on a WebSocket.
 */
export function checkUpgrade(
  request: IncomingMessage,
  identify: (token: string | undefined) => Identification,
  corsOrigins: readonly string[],
): UpgradeDecision {
  const origin = request.headers.origin;
  if (typeof origin === "string" && !originAllowed(origin, request.headers.host, corsOrigins)) {
    return { accept: false, status: 403, code: "origin_not_allowed", message: "origin not allowed" };
  }
  if (request.headers.authorization === undefined) return { accept: true, caller: undefined };
  const identified = identify(bearerToken(request.headers));
  if (!identified.ok) return { accept: false, status: 401, code: "invalid_api_key", message: "Invalid API key" };
  if (!identified.caller.scopes.has("events"))
    return { accept: false, status: 403, code: "insufficient_scope", message: "This key does not have the 'events' scope /v1/events needs." };
  return { accept: true, caller: identified.caller };
}

function originAllowed(origin: string, host: string | undefined, allowlist: readonly string[]): boolean {
  if (allowlist.includes("*") || allowlist.includes(origin)) return true;
  try {
    // same origin: the page was served by this gateway under the Host the browser used
    return host !== undefined && new URL(origin).host === host;
  } catch {
    return false;
  }
}

const PLAIN_GET = "GET /v1/events is a WebSocket endpoint: send Upgrade: websocket";

/** A plain `GET /v1/events` (no Upgrade header) is a client mistake worth a precise answer. */
export function answerPlainGet(): never {
  throw new GatewayError("upgrade_required", PLAIN_GET, null, { headers: { upgrade: "websocket" } });
}

import type { IncomingMessage, ServerResponse } from "node:http";
import { bearerToken, keyMatches } from "../api/auth.js";
import { sendJson } from "../api/respond.js";

export const EVENTS_PATH = "/v1/events";

export type UpgradeDecision = { accept: true; authenticatedByHeader: boolean } | { accept: false; status: 401 | 403; message: string };

/**
 * Decides an upgrade request on `GET /v1/events` before the WebSocket
 * handshake (SPEC §12.10); upgrades elsewhere never reach it.
 * Browsers always send `Origin`: it must be on the CORS allowlist or be the
 * gateway's own origin (the built-in dashboard). A wrong key in the header is
 * refused with 401; no header at all is let through to authenticate by
 * message, since browsers cannot set headers on a WebSocket.
 */
export function checkUpgrade(request: IncomingMessage, apiKey: string, corsOrigins: readonly string[]): UpgradeDecision {
  const origin = request.headers.origin;
  if (typeof origin === "string" && !originAllowed(origin, request.headers.host, corsOrigins)) {
    return { accept: false, status: 403, message: "origin not allowed" };
  }
  if (request.headers.authorization === undefined) return { accept: true, authenticatedByHeader: false };
  if (!keyMatches(bearerToken(request.headers), apiKey)) return { accept: false, status: 401, message: "Invalid API key" };
  return { accept: true, authenticatedByHeader: true };
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

/** A plain `GET /v1/events` (no Upgrade header) is a client mistake worth a precise answer. */
export function answerPlainGet(_request: IncomingMessage, response: ServerResponse): void {
  sendJson(
    response,
    426,
    {
      error: {
        message: "GET /v1/events is a WebSocket endpoint: send Upgrade: websocket",
        type: "invalid_request_error",
        param: null,
        code: "upgrade_required",
      },
    },
    { upgrade: "websocket" },
  );
}

import type { IncomingMessage } from "node:http";
import { bearerToken, keyMatches } from "../api/auth.js";

export const EVENTS_PATH = "/v1/events";

export type UpgradeDecision =
  | { accept: true; authenticatedByHeader: boolean }
  | { accept: false; status: 401 | 403 | 404; message: string };

/**
 * Decides an upgrade request before the WebSocket handshake (SPEC §12.10).
 * Browsers always send `Origin`: it must be on the CORS allowlist or be the
 * gateway's own origin (the built-in dashboard). A wrong key in the header is
 * refused with 401; no header at all is let through to authenticate by
 * message, since browsers cannot set headers on a WebSocket.
 */
export function checkUpgrade(request: IncomingMessage, apiKey: string, corsOrigins: readonly string[]): UpgradeDecision {
  const pathname = new URL(request.url ?? "/", "http://carrierd.local").pathname;
  if (pathname !== EVENTS_PATH) return { accept: false, status: 404, message: `no WebSocket endpoint at ${pathname}` };
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

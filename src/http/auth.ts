import { hash, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";

/** Compares bearer keys in constant time: both sides are hashed first, so length leaks nothing either. */
export function keyMatches(candidate: string | undefined, expected: string): boolean {
  if (candidate === undefined) return false;
  return timingSafeEqual(hash("sha256", candidate, "buffer"), expectedDigest(expected));
}

/** The gateway's key is hashed once, not on every request. */
let cachedKey: string | undefined;
let cachedDigest: Buffer = Buffer.alloc(0);
function expectedDigest(expected: string): Buffer {
  if (expected !== cachedKey) {
    cachedDigest = hash("sha256", expected, "buffer");
    cachedKey = expected;
  }
  return cachedDigest;
}

/**
 * The key a request carries: `Authorization: Bearer`, else `keyHeader` when
 * the endpoint names one (the Anthropic Messages API's `x-api-key`).
 */
export function requestKey(headers: IncomingHttpHeaders, keyHeader: string | undefined): string | undefined {
  const bearer = bearerToken(headers);
  if (bearer !== undefined || keyHeader === undefined) return bearer;
  const value = headers[keyHeader];
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}

export function bearerToken(headers: IncomingHttpHeaders): string | undefined {
  const header = headers.authorization;
  if (typeof header !== "string") return undefined;
  const match = /^Bearer\s+(.+)$/i.exec(header.trim());
  return match?.[1]?.trim();
}

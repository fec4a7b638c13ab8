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
 * the endpoint names one (the Anthropic Messages API's `x-api-key`, the
 * Gemini API's `x-goog-api-key`), else the query parameter `keyQuery`
 * names (the Gemini API's `?key=`), read from the URL only then.
 */
export function requestKey(
  headers: IncomingHttpHeaders,
  keyHeader: string | undefined,
  query?: { readonly name: string; readonly url: () => URL },
): string | undefined {
  const bearer = bearerToken(headers);
  if (bearer !== undefined) return bearer;
  const value = keyHeader === undefined ? undefined : headers[keyHeader];
  if (typeof value === "string" && value.trim() !== "") return value.trim();
  const inQuery = query?.url().searchParams.get(query.name)?.trim();
  return inQuery ? inQuery : undefined;
}

export function bearerToken(headers: IncomingHttpHeaders): string | undefined {
  const header = headers.authorization;
  if (typeof header !== "string") return undefined;
  const match = /^Bearer\s+(.+)$/i.exec(header.trim());
  return match?.[1]?.trim();
}

import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";

/** Compares bearer keys in constant time: both sides are hashed first, so length leaks nothing either. */
export function keyMatches(candidate: string | undefined, expected: string): boolean {
  if (candidate === undefined) return false;
  const a = createHash("sha256").update(candidate).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b);
}

export function bearerToken(headers: IncomingHttpHeaders): string | undefined {
  const header = headers.authorization;
  if (typeof header !== "string") return undefined;
  const match = /^Bearer\s+(.+)$/i.exec(header.trim());
  return match?.[1]?.trim();
}

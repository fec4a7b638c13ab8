import { createHash } from "node:crypto";

/**
 * Fingerprint matching is scoped to the API key: turns are indexed
 * under a hash of the key, never the key itself, so state.db holds no secret.
 */
export function keyScope(apiKey: string): string {
  return createHash("sha256").update(`carrierd-session-scope:${apiKey}`).digest("base64url").slice(0, 22);
}

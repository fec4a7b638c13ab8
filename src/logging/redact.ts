/**
 * Secrets never reach a log line (SPEC §11). pino's path-based redaction
 * only covers paths someone thought of; this walks every logged object, so
 * a key nested in an error's request options or an upstream's headers is
 * caught too, and a bearer token inside any string is masked.
 */

export const CENSOR = "[redacted]";

/**
 * Key names whose values are secrets, wherever they appear: headers
 * (`Authorization`, `x-api-key`), options (`apiKey`), and environment
 * variables (`DEEPSEEK_API_KEY`, `AWS_SECRET_ACCESS_KEY`) when a whole env is logged.
 */
const SECRET_KEY = /^(authorization|proxy-authorization|cookie|set-cookie|key|secret|password|token)$|(^|[-_])(api[-_]?key|apikey|access[-_]?key|secret|password|(access|refresh|session|security|auth|bearer|id)[-_]?token)$|apiKey$/i;
const BEARER = /\b(Bearer|Basic)\s+[^\s"',;]+/gi;
/** Log objects are small; anything deeper is cut rather than walked. */
const MAX_DEPTH = 8;

export function redact<T>(value: T): T {
  return scrub(value, 0) as T;
}

function scrub(value: unknown, depth: number): unknown {
  if (typeof value === "string") return value.replace(BEARER, `$1 ${CENSOR}`);
  if (value === null || typeof value !== "object") return value;
  if (depth >= MAX_DEPTH) return "[too deep]";
  if (Array.isArray(value)) return value.map((item) => scrub(item, depth + 1));
  if (value instanceof Error) return scrubError(value, depth);
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) out[key] = SECRET_KEY.test(key) ? CENSOR : scrub(child, depth + 1);
  return out;
}

/** An Error's message and stack are not enumerable: spell them out, as pino's err serializer would. */
function scrubError(error: Error, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = { type: error.name, message: scrub(error.message, depth), stack: scrub(error.stack, depth) };
  for (const [key, child] of Object.entries(error)) out[key] = SECRET_KEY.test(key) ? CENSOR : scrub(child, depth + 1);
  if (error.cause !== undefined) out.cause = scrub(error.cause, depth + 1);
  return out;
}

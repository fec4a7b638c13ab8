/**
 * Secrets never reach a log line (docs/operators.md#logs). pino's path-based redaction
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
const SECRET_KEY =
  /^(authorization|proxy-authorization|cookie|set-cookie|key|secret|password|token)$|(^|[-_])(api[-_]?key|apikey|access[-_]?key|secret|password|(access|refresh|session|security|auth|bearer|id)[-_]?token)$|apiKey$/i;
const BEARER = /\b(Bearer|Basic)\s+[^\s"',;]+/gi;
/** A secret in a URL's query string (`?api_key=…`, Gemini's `?key=…`, `&access_token=…`) or a form body. */
const QUERY_SECRET =
  /([?&;](?:api[-_]?key|apikey|key|token|access[-_]?token|auth|password|secret|signature|x-amz-signature|x-amz-security-token)=)[^&#\s"']+/gi;
/** Provider key shapes that stand out in free text, e.g. an upstream's "Incorrect API key provided: sk-…"; and carrierd's own access keys (`ck_`). */
const KEY_SHAPES = /\b(?:sk|rk)-[A-Za-z0-9_-]{16,}|\bAIza[0-9A-Za-z_-]{30,}|\bgh[pousr]_[A-Za-z0-9]{30,}|\bck_[A-Za-z0-9_-]{40,}/g;
/**
 * What every text the three patterns above change holds somewhere (any case): a
 * text with none of these is passed over after this one scan rather than three
 * replaces. Most logged strings (a method, a path, a model, a session id) are
 * such texts, and every log line's every string is scrubbed: the access log's
 * line at info spent most of its time here.
 */
const MAY_HOLD_SECRET = /bearer|basic|=|sk-|rk-|aiza|gh[pousr]_|ck_/i;
/** Values known to be secrets (the gateway key, each provider's key): masked wherever they appear, whatever their shape. */
const knownSecrets = new Set<string>();
/** Shorter values are not masked by value: too likely to occur in ordinary text. */
const MIN_SECRET_LENGTH = 8;

/** Makes `redact` mask `value` wherever it appears in a string (the gateway registers its key and the provider keys it reads). */
export function registerSecret(value: string | undefined): void {
  if (value && value.length >= MIN_SECRET_LENGTH) knownSecrets.add(value);
}

/** A string with every secret it contains masked: known values, bearer tokens, query-string keys, key-shaped tokens. */
export function redactText(text: string): string {
  let out = MAY_HOLD_SECRET.test(text) ? text.replace(BEARER, `$1 ${CENSOR}`).replace(QUERY_SECRET, `$1${CENSOR}`).replace(KEY_SHAPES, CENSOR) : text;
  if (out.length >= MIN_SECRET_LENGTH) for (const secret of knownSecrets) if (out.includes(secret)) out = out.replaceAll(secret, CENSOR);
  return out;
}
/**
 * Whether a key names a secret (SECRET_KEY), remembered per name: log lines
 * name the same few keys again and again. Bounded, so keys made of data
 * (an object of session ids) cannot grow it.
 */
const secretKeys = new Map<string, boolean>();
const MAX_REMEMBERED_KEYS = 4096;

function isSecretKey(key: string): boolean {
  let secret = secretKeys.get(key);
  if (secret === undefined) {
    secret = SECRET_KEY.test(key);
    if (secretKeys.size >= MAX_REMEMBERED_KEYS) secretKeys.clear();
    secretKeys.set(key, secret);
  }
  return secret;
}

/** Log objects are small; anything deeper is cut rather than walked. */
const MAX_DEPTH = 8;

export function redact<T>(value: T): T {
  return scrub(value, 0) as T;
}

function scrub(value: unknown, depth: number): unknown {
  if (typeof value === "string") return redactText(value);
  if (value === null || typeof value !== "object") return value;
  if (depth >= MAX_DEPTH) return "[too deep]";
  if (Array.isArray(value)) return value.map((item) => scrub(item, depth + 1));
  if (value instanceof Error) return scrubError(value, depth);
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) out[key] = isSecretKey(key) ? CENSOR : scrub(child, depth + 1);
  return out;
}

/** An Error's message and stack are not enumerable: spell them out, as pino's err serializer would. */
function scrubError(error: Error, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = { type: error.name, message: scrub(error.message, depth), stack: scrub(error.stack, depth) };
  for (const [key, child] of Object.entries(error)) out[key] = isSecretKey(key) ? CENSOR : scrub(child, depth + 1);
  if (error.cause !== undefined) out.cause = scrub(error.cause, depth + 1);
  return out;
}

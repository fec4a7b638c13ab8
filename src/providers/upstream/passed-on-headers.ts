/** Statuses whose Retry-After and rate-limit headers the client is given: it is the one who must wait. */
const PASSED_ON_STATUSES = new Set([429, 503]);
/**
 * `Retry-After` (RFC 9110 §10.2.3), OpenAI's `retry-after-ms`, the IETF
 * draft's `RateLimit`/`RateLimit-Policy` and the vendor families
 * (`x-ratelimit-*` of OpenAI, Groq, DeepSeek…, `anthropic-ratelimit-*`).
 */
const PASSED_ON = /^(retry-after(-ms)?|ratelimit(-[a-z-]+)?|x-ratelimit-[a-z0-9-]+|[a-z0-9]+-ratelimit-[a-z0-9-]+)$/;

/** The upstream's headers a client needs to back off, for a status that asks it to; undefined when none. */
export function passedOnHeaders(status: number, headers: Record<string, string | string[] | undefined>): Record<string, string> | undefined {
  if (!PASSED_ON_STATUSES.has(status)) return undefined;
  let kept: Record<string, string> | undefined;
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (value === undefined || !PASSED_ON.test(lower)) continue;
    // a value with CR or LF could split the client's response: never passed on
    const text = Array.isArray(value) ? value.join(", ") : value;
    if (/[\r\n]/.test(text)) continue;
    (kept ??= {})[lower] = text;
  }
  return kept;
}

/**
 * The answer headers a carried call's client gets as the upstream sent them,
 * whatever the status: the body's type, the provider's request id, its retry
 * advice (`retry-after`, `x-should-retry`) and rate limits, and its own
 * family's headers (`anthropic-*`, `openai-*`). Hop-by-hop and framing
 * headers are the gateway's own connection's.
 */
const CARRIED =
  /^(content-type|request-id|x-request-id|x-should-retry|retry-after(-ms)?|ratelimit(-[a-z-]+)?|x-ratelimit-[a-z0-9-]+|[a-z0-9]+-ratelimit-[a-z0-9-]+|anthropic-[a-z0-9-]+|openai-[a-z0-9-]+)$/;

export function carriedAnswerHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (value === undefined || !CARRIED.test(lower)) continue;
    const text = Array.isArray(value) ? value.join(", ") : value;
    if (/[\r\n]/.test(text)) continue;
    kept[lower] = text;
  }
  return kept;
}

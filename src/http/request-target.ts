import type { IncomingMessage } from "node:http";

const BASE = "http://carrierd.local";

/**
 * A plain path: segments of letters, digits and `_ ~ - . :`, none empty but
 * a final one, none starting with a dot. The URL parser hands such a path
 * back unchanged (nothing to percent-encode, no dot segment, no query),
 * so its pathname is the request target itself. The colon is Google's:
 * `models/{model}:generateContent`.
 */
export const PLAIN_PATH = /^(?:\/[\w~:-][\w.~:-]*)+\/?$|^\/$/;

/** A plain query (`alt=sse`): nothing the parser would encode or end early (`#`), so the pathname is what comes before the `?`. */
const PLAIN_QUERY = /^[\w.~=&-]*$/;

/** A request's path, and its parsed URL for the handlers that read more of it (a query string). */
export interface RequestTarget {
  readonly pathname: string;
  readonly url: URL;
}

/**
 * Plain request targets (docs/performance.md#the-requests-edges): most
 * requests name a plain path
 * (`/v1/chat/completions`), whose pathname is the target as sent. Parsing
 * it into a URL cost 5–10 µs a request inside the gateway (the parser is
 * cold by then) against well under 1 µs for this test; the URL is parsed
 * only when a handler reads it; a plain path with a plain query (the Gemini
 * API's `?alt=sse`) likewise. Any other target is parsed as before.
 * Undefined for a target Node accepts but no URL can be made of (`//[`),
 * the client's mistake.
 */
export function requestTarget(request: IncomingMessage): RequestTarget | undefined {
  const raw = request.url ?? "/";
  if (PLAIN_PATH.test(raw)) return new PlainTarget(raw, raw);
  const query = raw.indexOf("?");
  if (query > 0) {
    const path = raw.slice(0, query);
    if (PLAIN_PATH.test(path) && PLAIN_QUERY.test(raw.slice(query + 1))) return new PlainTarget(path, raw);
  }
  try {
    const url = new URL(raw, BASE);
    return { pathname: url.pathname, url };
  } catch {
    return undefined;
  }
}

class PlainTarget implements RequestTarget {
  private parsed: URL | undefined;

  constructor(
    readonly pathname: string,
    /** The target as sent, its plain query with it. */
    private readonly raw: string,
  ) {}

  get url(): URL {
    return (this.parsed ??= new URL(this.raw, BASE));
  }
}

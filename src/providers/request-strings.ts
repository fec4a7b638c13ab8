import type { ChatMessage } from "./contract.js";

/**
 * A client's request body, held while its turn goes upstream: the long
 * strings of the messages built from it (tool outputs, pasted files, the
 * system prompt) are written into the upstream body as the client's own
 * bytes instead of being serialised again (docs/performance.md#request-string-bytes).
 * The ingress adapter that parsed the body releases it when its response
 * ends, so a message kept longer (the replay memo keeps some) keeps no body.
 */
export class RequestBytes {
  constructor(private bytes: Buffer | undefined) {}

  /** The body, or undefined once released. */
  get held(): Buffer | undefined {
    return this.bytes;
  }

  release(): void {
    this.bytes = undefined;
  }
}

/** One string member of a message, and where in the request body its JSON lies. */
interface KnownString {
  readonly key: string;
  readonly value: string;
  readonly start: number;
  readonly end: number;
}

interface KnownStrings {
  readonly body: RequestBytes;
  readonly strings: KnownString[];
  /** Where the whole message lies, when its bytes are exactly JSON.stringify's. */
  readonly whole?: { readonly start: number; readonly end: number };
}

/** Messages whose long strings are known as request bytes. Weak: an entry goes with its message. */
const known = new WeakMap<ChatMessage, KnownStrings>();

/**
 * Notes that `message[key]`, a string, is written as `body`'s bytes from
 * `start` to `end` (quotes included). The caller vouches that those bytes
 * are exactly what `JSON.stringify(message[key])` gives (the ingress
 * adapter's scan checks it); the value is kept, so a member changed since
 * is serialised anew.
 */
export function noteRequestString(message: ChatMessage, key: string, body: RequestBytes, start: number, end: number): void {
  const value = message[key];
  if (typeof value !== "string") return;
  const entry = known.get(message);
  if (entry && entry.body === body) entry.strings.push({ key, value, start, end });
  else known.set(message, { body, strings: [{ key, value, start, end }] });
}

/**
 * Notes that the whole of `message` is written as `body`'s bytes from
 * `start` to `end`; the caller vouches that they are exactly what
 * `JSON.stringify(message)` gives, and the pipeline never modifies a
 * message it was handed (it copies the ones it changes), as the replay
 * memo (chat-json.ts) relies on too.
 */
export function noteRequestMessage(message: ChatMessage, body: RequestBytes, start: number, end: number): void {
  known.set(message, { body, strings: [], whole: { start, end } });
}

/**
 * Appends a message's JSON to `out` as pieces (strings and request bytes)
 * that join to `JSON.stringify(message)`; false, appending nothing, when
 * none of its strings is known (or its body was released): then the caller
 * serialises it whole.
 */
export function appendMessagePieces(message: ChatMessage, out: (string | Buffer)[]): boolean {
  const entry = known.get(message);
  const bytes = entry?.body.held;
  if (!entry || !bytes) return false;
  if (entry.whole) {
    out.push(bytes.subarray(entry.whole.start, entry.whole.end));
    return true;
  }
  let first = true;
  // JSON.stringify's walk of a plain object: own enumerable keys in order, members whose value has no JSON left out
  for (const key of Object.keys(message)) {
    const value = message[key];
    const span = typeof value === "string" ? spanOf(entry.strings, key, value) : undefined;
    const json = span ? bytes.subarray(span.start, span.end) : (JSON.stringify(value) as string | undefined);
    if (json === undefined) continue;
    out.push(first ? "{" : ",", JSON.stringify(key), ":", json);
    first = false;
  }
  out.push(first ? "{}" : "}");
  return true;
}

function spanOf(strings: readonly KnownString[], key: string, value: string): KnownString | undefined {
  for (const known of strings) if (known.key === key && known.value === value) return known;
  return undefined;
}

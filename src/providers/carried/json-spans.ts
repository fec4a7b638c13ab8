/**
 * Where the values of a JSON text lie in its bytes: the members of an
 * object and the elements of an array, as byte spans, without parsing the
 * values themselves. A carried request (docs/architecture.md#two-paths) is
 * changed only where carrierd must change it; these spans say where that is.
 * The text is UTF-8: every structural character is one ASCII byte, and a
 * string is skipped by jumping from quote to quote (`indexOf`).
 */

/** One member of an object: its key, where the member begins (its key's quote) and where its value lies. */
export interface MemberSpan {
  readonly key: string;
  readonly start: number;
  readonly valueStart: number;
  readonly valueEnd: number;
}

/** One element of an array, `[start, end)`. */
export interface ElementSpan {
  readonly start: number;
  readonly end: number;
}

/** An object's members and where its braces are; `close` is the index of `}`. */
export interface ObjectSpan {
  readonly open: number;
  readonly close: number;
  readonly members: readonly MemberSpan[];
}

/** An array's elements and where its brackets are; `close` is the index of `]`. */
export interface ArraySpan {
  readonly open: number;
  readonly close: number;
  readonly elements: readonly ElementSpan[];
}

/** Thrown for bytes that are not the JSON they were said to be (the caller parsed them: a defect, not input). */
export class SpanError extends Error {}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;

/** The first byte at or after `at` that is not JSON whitespace. */
export function skipSpace(bytes: Buffer, at: number): number {
  while (at < bytes.length) {
    const byte = bytes[at];
    if (byte !== 0x20 && byte !== 0x0a && byte !== 0x0d && byte !== 0x09) return at;
    at++;
  }
  return at;
}

/** The index just past the string whose opening quote is at `at`. */
function stringEnd(bytes: Buffer, at: number): number {
  let from = at + 1;
  for (;;) {
    const quote = bytes.indexOf(QUOTE, from);
    if (quote < 0) throw new SpanError("unterminated string");
    let backslashes = 0;
    for (let back = quote - 1; back > at && bytes[back] === BACKSLASH; back--) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

/** The index just past the value that begins at `at` (whitespace already skipped). */
export function valueEnd(bytes: Buffer, at: number): number {
  const first = bytes[at];
  if (first === QUOTE) return stringEnd(bytes, at);
  if (first !== 0x7b && first !== 0x5b) {
    // a number, true, false or null: up to the next delimiter
    let end = at;
    while (end < bytes.length) {
      const byte = bytes[end];
      if (byte === COMMA || byte === 0x7d || byte === 0x5d || byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09) break;
      end++;
    }
    if (end === at) throw new SpanError(`no value at ${at}`);
    return end;
  }
  let depth = 0;
  let index = at;
  while (index < bytes.length) {
    const byte = bytes[index];
    if (byte === QUOTE) {
      index = stringEnd(bytes, index);
      continue;
    }
    if (byte === 0x7b || byte === 0x5b) depth++;
    else if (byte === 0x7d || byte === 0x5d) {
      depth--;
      if (depth === 0) return index + 1;
    }
    index++;
  }
  throw new SpanError("unterminated value");
}

/**
 * The members of the object whose `{` is at `at`. A member whose key
 * `spread` holds and whose value is an array has its elements read in the
 * same pass, kept with the bytes (see keepSpan) for arraySpan to hand out.
 */
export function objectSpan(bytes: Buffer, at: number, spread?: ReadonlySet<string>): ObjectSpan {
  const kept = keptSpans.get(bytes)?.get(at);
  if (kept && "members" in kept) return kept;
  if (bytes[at] !== 0x7b) throw new SpanError(`no object at ${at}`);
  const members: MemberSpan[] = [];
  let index = skipSpace(bytes, at + 1);
  if (bytes[index] === 0x7d) return { open: at, close: index, members };
  for (;;) {
    if (bytes[index] !== QUOTE) throw new SpanError(`no key at ${index}`);
    const keyStart = index;
    const keyEnd = stringEnd(bytes, index);
    const key = JSON.parse(bytes.toString("utf8", index, keyEnd)) as string;
    index = skipSpace(bytes, keyEnd);
    if (bytes[index] !== COLON) throw new SpanError(`no colon at ${index}`);
    const valueStart = skipSpace(bytes, index + 1);
    let end: number;
    if (spread?.has(key) && bytes[valueStart] === 0x5b) {
      const array = arraySpan(bytes, valueStart);
      keepSpan(bytes, array);
      end = array.close + 1;
    } else end = valueEnd(bytes, valueStart);
    members.push({ key, start: keyStart, valueStart, valueEnd: end });
    index = skipSpace(bytes, end);
    if (bytes[index] === COMMA) {
      index = skipSpace(bytes, index + 1);
      continue;
    }
    if (bytes[index] === 0x7d) return { open: at, close: index, members };
    throw new SpanError(`no comma or brace at ${index}`);
  }
}

/**
 * Spans read from a body once and kept with its bytes: a large request's
 * body is read into spans as it is parsed (src/http/read-body.ts), and a
 * carried body is spliced along the same spans (its top-level object, its
 * list of messages or items) without reading the body again. Weak: they go
 * with the bytes. The bytes of a request are never written to.
 */
const keptSpans = new WeakMap<Buffer, Map<number, ObjectSpan | ArraySpan>>();

/** Keeps a span of `bytes` for objectSpan and arraySpan to hand out again. */
export function keepSpan(bytes: Buffer, span: ObjectSpan | ArraySpan): void {
  let spans = keptSpans.get(bytes);
  if (!spans) keptSpans.set(bytes, (spans = new Map<number, ObjectSpan | ArraySpan>()));
  spans.set(span.open, span);
}

/** The elements of the array whose `[` is at `at`. */
export function arraySpan(bytes: Buffer, at: number): ArraySpan {
  const kept = keptSpans.get(bytes)?.get(at);
  if (kept && "elements" in kept) return kept;
  if (bytes[at] !== 0x5b) throw new SpanError(`no array at ${at}`);
  const elements: ElementSpan[] = [];
  let index = skipSpace(bytes, at + 1);
  if (bytes[index] === 0x5d) return { open: at, close: index, elements };
  for (;;) {
    const end = valueEnd(bytes, index);
    elements.push({ start: index, end });
    index = skipSpace(bytes, end);
    if (bytes[index] === COMMA) {
      index = skipSpace(bytes, index + 1);
      continue;
    }
    if (bytes[index] === 0x5d) return { open: at, close: index, elements };
    throw new SpanError(`no comma or bracket at ${index}`);
  }
}

/** A member of an object span by key: the last one, as JSON.parse keeps the last of a repeated key. */
export function memberOf(object: ObjectSpan, key: string): MemberSpan | undefined {
  for (let index = object.members.length - 1; index >= 0; index--) if (object.members[index].key === key) return object.members[index];
  return undefined;
}

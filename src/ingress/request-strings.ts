import { noteRequestMessage, noteRequestString, RequestBytes } from "../providers/request-strings.js";
import type { ChatMessage } from "../providers/contract.js";

/** A string member of an object in a request body: its key, and where its JSON (quotes included) lies in the bytes. */
export interface StringMember {
  readonly key: string;
  readonly start: number;
  readonly end: number;
}

/** The long strings of a request body found by `scanRequestStrings`. */
export interface RequestStrings {
  readonly body: RequestBytes;
  /** The top-level object's own long string members (`instructions`). */
  readonly top: readonly StringMember[];
  /** Per element of the listed array (`messages`, `input`): its long string members, and where it lies when its bytes are exact. */
  readonly elements: readonly ElementStrings[];
}

/** One element of a request's listed array (see RequestStrings). */
export interface ElementStrings {
  readonly members: readonly StringMember[];
  /** The element's JSON, when its bytes are exactly JSON.stringify's for its parsed value. */
  readonly whole: StringMember | undefined;
}

/** Strings shorter than this (in bytes, quotes included) are serialised as before: a span costs more than they do. */
const MIN_BYTES = 256;

/**
 * Bodies smaller than this are not scanned: a chat frontend's history of
 * short messages is serialised again faster than it is scanned and spliced
 * (the 20-turn chat bench ran at 0.78× the build without the scan).
 */
const MIN_BODY_BYTES = 64 * 1024;

/** scanRequestStrings for a body large enough to gain from it (MIN_BODY_BYTES); undefined for a smaller one. */
export function requestStringsOf(bytes: Buffer, list: string): RequestStrings | undefined {
  return bytes.length < MIN_BODY_BYTES ? undefined : scanRequestStrings(bytes, list);
}

/**
 * Where a request's long strings lie in the bytes it was parsed from
 * (docs/performance.md#request-string-bytes): the string members of the
 * top-level object and of each object of its array `list`, at least
 * 256 bytes long, whose JSON text is exactly what `JSON.stringify` writes
 * for the parsed string (every escape one it writes too). An object with a
 * repeated or escaped key gives none (JSON.parse keeps its last value); a
 * body whose `list` is repeated or not an array gives undefined. One pass
 * over the bytes, jumping from quote to backslash to quote natively;
 * undefined too for anything it cannot follow, never an error.
 */
export function scanRequestStrings(bytes: Buffer, list: string, body = new RequestBytes(bytes)): RequestStrings | undefined {
  try {
    const scan = new Scanner(bytes);
    scan.space();
    if (bytes[scan.at] !== OPEN_OBJECT) return undefined;
    const top: StringMember[] = [];
    let elements: ElementStrings[] | undefined;
    const listed = scan.object(top, (key) => {
      if (key !== list || bytes[scan.at] !== OPEN_ARRAY || elements) return false;
      elements = scan.elements();
      return true;
    });
    return listed && elements ? { body, top, elements } : undefined;
  } catch {
    return undefined;
  }
}

/** Notes each listed object's long strings on the message parsed from it (chat completions: `messages[i]` is the message itself). */
export function noteListedMessages(strings: RequestStrings | undefined, messages: readonly ChatMessage[]): void {
  if (!strings || strings.elements.length !== messages.length) return;
  strings.elements.forEach((element, index) => {
    const message = messages[index];
    if (typeof message !== "object" || message === null || Array.isArray(message)) return;
    if (element.whole) noteRequestMessage(message, strings.body, element.whole.start, element.whole.end);
    else for (const member of element.members) noteRequestString(message, member.key, strings.body, member.start, member.end);
  });
}

/** Notes that `message[key]` is the request's string member `member` (an adapter that renames a member: `output` → `content`). */
export function noteMember(strings: RequestStrings, message: ChatMessage, key: string, member: StringMember | undefined): void {
  if (member) noteRequestString(message, key, strings.body, member.start, member.end);
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/** Thrown past the end of the bytes: the scan gives up (the body parsed, so only a bug here gets there). */
class OutOfBytes extends Error {}

/** A cursor over valid JSON (the body was parsed before it is scanned). */
class Scanner {
  at = 0;
  /** The next quote and backslash at or after `at`, found natively and kept until passed. */
  private nextQuote = -1;
  private nextBackslash = -1;
  /** Of the last string: whether it had escapes, and whether each is one JSON.stringify writes. */
  escaped = false;
  canonical = true;
  /** Whether everything since it was last set is written as JSON.stringify writes its parsed value: no space, no other escapes or number forms, keys unique, none an array index. */
  exact = true;
  private readonly keys: number[] = [];

  constructor(private readonly bytes: Buffer) {}

  space(): void {
    const bytes = this.bytes;
    const from = this.at;
    let c: number | undefined;
    while ((c = bytes[this.at]) === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) this.at++;
    if (c === undefined) throw new OutOfBytes();
    if (this.at !== from) this.exact = false;
  }

  /** At an opening quote: moves past the closing one. */
  string(): void {
    const bytes = this.bytes;
    let at = this.at + 1;
    this.escaped = false;
    this.canonical = true;
    for (;;) {
      if (this.nextQuote < at) {
        this.nextQuote = bytes.indexOf(QUOTE, at);
        if (this.nextQuote < 0) throw new OutOfBytes();
      }
      if (this.nextBackslash < at) {
        const found = bytes.indexOf(BACKSLASH, at);
        this.nextBackslash = found < 0 ? bytes.length : found;
      }
      if (this.nextQuote < this.nextBackslash) {
        this.at = this.nextQuote + 1;
        if (!this.canonical) this.exact = false;
        return;
      }
      at = this.nextBackslash;
      this.escaped = true;
      const escape = bytes[at + 1];
      if (escape === 0x75) {
        if (!isControlEscape(bytes, at)) this.canonical = false;
        at += 6;
      } else {
        if (escape === 0x2f) this.canonical = false; // "\/": JSON.stringify writes "/"
        at += 2;
      }
    }
  }

  /** Past any value. */
  value(): void {
    const bytes = this.bytes;
    const c = bytes[this.at];
    if (c === QUOTE) return this.string();
    if (c === OPEN_OBJECT) {
      this.object(undefined);
      return;
    }
    if (c === OPEN_ARRAY) {
      this.at++;
      this.space();
      if (bytes[this.at] === CLOSE_ARRAY) {
        this.at++;
        return;
      }
      for (;;) {
        this.space();
        this.value();
        this.space();
        if (bytes[this.at++] === CLOSE_ARRAY) return;
      }
    }
    // a number or true, false, null: up to the next delimiter
    const start = this.at;
    let d: number | undefined;
    while ((d = bytes[this.at]) !== 0x2c && d !== CLOSE_OBJECT && d !== CLOSE_ARRAY && !isSpace(d)) {
      if (d === undefined) throw new OutOfBytes();
      this.at++;
    }
    if (c !== 0x74 && c !== 0x66 && c !== 0x6e) {
      const text = bytes.toString("latin1", start, this.at);
      if (String(Number(text)) !== text) this.exact = false; // 1.0, 1e3, -0: JSON.stringify writes 1, 1000, 0
    }
  }

  /**
   * At `{`: past the object, its long string members added to `out` when
   * given. `claim` is asked about each member that is not a string, at its
   * value: true when it moved past the value itself. False when a key
   * repeats or is escaped: then nothing of this object is added.
   */
  object(out: StringMember[] | undefined, claim?: (key: string) => boolean): boolean {
    const bytes = this.bytes;
    const first = out?.length ?? 0;
    const keys = this.keys;
    const keysFrom = keys.length;
    let clean = true;
    this.at++;
    this.space();
    if (bytes[this.at] === CLOSE_OBJECT) {
      this.at++;
      return true;
    }
    for (;;) {
      this.space();
      const keyStart = this.at;
      this.string();
      const keyEnd = this.at;
      if (this.escaped) clean = false;
      for (let k = keysFrom; k < keys.length; k += 2)
        if (keys[k + 1] - keys[k] === keyEnd - keyStart && bytes.compare(bytes, keyStart, keyEnd, keys[k], keys[k + 1]) === 0) clean = false;
      // an array index as a key: JSON.parse orders those first
      const lead = bytes[keyStart + 1];
      if (lead >= 0x30 && lead <= 0x39) this.exact = false;
      keys.push(keyStart, keyEnd);
      this.space();
      this.at++; // the colon
      this.space();
      if (out && bytes[this.at] === QUOTE) {
        const start = this.at;
        this.string();
        if (this.canonical && this.at - start >= MIN_BYTES) out.push({ key: bytes.toString("utf8", keyStart + 1, keyEnd - 1), start, end: this.at });
      } else if (!claim?.(bytes.toString("utf8", keyStart + 1, keyEnd - 1))) this.value();
      this.space();
      if (bytes[this.at++] === CLOSE_OBJECT) break;
    }
    keys.length = keysFrom;
    if (!clean) {
      this.exact = false;
      if (out) out.length = first;
    }
    return clean;
  }

  /** At `[`: past the array, each element's long string members (objects only), and its whole span when exact. */
  elements(): ElementStrings[] {
    const bytes = this.bytes;
    const elements: ElementStrings[] = [];
    this.at++;
    this.space();
    if (bytes[this.at] === CLOSE_ARRAY) {
      this.at++;
      return elements;
    }
    for (;;) {
      this.space();
      this.exact = true;
      const start = this.at;
      const members: StringMember[] = [];
      if (bytes[this.at] === OPEN_OBJECT) this.object(members);
      else this.value();
      elements.push({ members, whole: this.exact ? { key: "", start, end: this.at } : undefined });
      this.space();
      if (bytes[this.at++] === CLOSE_ARRAY) return elements;
    }
  }
}

function isSpace(c: number | undefined): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

const hexDigit = (c: number | undefined): number => (c === undefined ? -1 : c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : -1);

/**
 * Whether the `\u` escape at `at` is one JSON.stringify writes: a control
 * character other than the five with a short escape, in lowercase hex. (A
 * lone surrogate is written escaped too; it is rare enough to serialise anew.)
 */
function isControlEscape(bytes: Buffer, at: number): boolean {
  if (bytes[at + 2] !== 0x30 || bytes[at + 3] !== 0x30) return false;
  const high = bytes[at + 4];
  const low = hexDigit(bytes[at + 5]);
  if ((high !== 0x30 && high !== 0x31) || low < 0) return false;
  const code = (high - 0x30) * 16 + low;
  return code !== 0x08 && code !== 0x09 && code !== 0x0a && code !== 0x0c && code !== 0x0d;
}

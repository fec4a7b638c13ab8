import { skipSpace, type ArraySpan, type MemberSpan, type ObjectSpan } from "./json-spans.js";

/** One change to a carried body: the bytes `[start, end)` replaced by `text` (an insertion when start equals end). */
interface Splice {
  readonly start: number;
  readonly end: number;
  readonly text: string;
}

/**
 * The changes carrierd makes to a body it carries, applied in one pass:
 * everything between them is the client's bytes, copied. Changes must not
 * overlap; they may be added in any order.
 */
export class Splices {
  private readonly list: Splice[] = [];

  constructor(private readonly bytes: Buffer) {}

  get count(): number {
    return this.list.length;
  }

  /** A member's value replaced by `json` (already JSON text). */
  replaceValue(member: MemberSpan, json: string): void {
    this.list.push({ start: member.valueStart, end: member.valueEnd, text: json });
  }

  /** A member set to `json`: its value replaced when the object has it, else appended as the object's last member. */
  setMember(object: ObjectSpan, member: MemberSpan | undefined, key: string, json: string): void {
    if (member) this.replaceValue(member, json);
    else this.appendMembers(object, [[key, json]], object.members.length > 0);
  }

  /** `text` put in at `at`, before the byte there. */
  insert(at: number, text: string): void {
    this.list.push({ start: at, end: at, text });
  }

  /** Members added at the end of an object; `afterOthers`: members remain before them, so a comma leads. */
  appendMembers(object: ObjectSpan, entries: readonly (readonly [string, string])[], afterOthers: boolean): void {
    if (entries.length === 0) return;
    const text = entries.map(([key, json]) => `${JSON.stringify(key)}:${json}`).join(",");
    this.list.push({ start: object.close, end: object.close, text: afterOthers ? `,${text}` : text });
  }

  /**
   * Members removed, each with the comma that joined it to the rest: a
   * member with one after it goes up to that one's key; a run of removed
   * members at the end goes from the last member kept.
   */
  removeMembers(object: ObjectSpan, removed: ReadonlySet<MemberSpan>): void {
    const members = object.members;
    let tail = members.length;
    while (tail > 0 && removed.has(members[tail - 1])) tail--;
    for (let index = 0; index < tail; index++) {
      const member = members[index];
      if (removed.has(member)) this.list.push({ start: member.start, end: members[index + 1].start, text: "" });
    }
    if (tail === members.length) return;
    const from = tail > 0 ? members[tail - 1].valueEnd : members[0].start;
    this.list.push({ start: from, end: members.at(-1)!.valueEnd, text: "" });
  }

  /**
   * An array's elements rewritten: `keep` lists, in order, what the array
   * holds afterwards — an element of the client's by its index (its bytes
   * copied) or new JSON text. Elements left out are removed with their commas.
   */
  rewriteArray(array: ArraySpan, keep: readonly (number | { json: string })[]): void {
    const unchanged = keep.length === array.elements.length && keep.every((entry, index) => entry === index);
    if (unchanged) return;
    // the client's elements that stay, in their order, keep their bytes and what lies between them
    const parts: string[] = [];
    for (const entry of keep) {
      if (typeof entry === "number") {
        const element = array.elements[entry];
        parts.push(this.bytes.toString("utf8", element.start, element.end));
      } else parts.push(entry.json);
    }
    const first = array.elements[0];
    const last = array.elements.at(-1);
    const start = first ? first.start : skipSpace(this.bytes, array.open + 1);
    const end = last ? last.end : start;
    this.list.push({ start, end, text: parts.join(",") });
  }

  /** The body with every change applied, in one buffer. */
  apply(): Buffer {
    const body = this.applied();
    return body instanceof SplicedBytes ? body.toBuffer() : body;
  }

  /**
   * The body with every change applied, as it is sent upstream: a body of
   * 128 KiB or more stays the pieces it is made of, the client's bytes
   * between the changes never copied (SplicedBytes); a smaller one is one buffer.
   */
  applied(): Buffer | SplicedBytes {
    if (this.list.length === 0) return this.bytes;
    const sorted = this.list.length === 1 ? this.list : [...this.list].sort((a, b) => a.start - b.start || a.end - b.end);
    const pieces: Buffer[] = [];
    let at = 0;
    let length = 0;
    for (const splice of sorted) {
      if (splice.start < at) throw new Error("overlapping changes to a carried body");
      if (splice.start > at) pieces.push(this.bytes.subarray(at, splice.start));
      if (splice.text) pieces.push(Buffer.from(splice.text, "utf8"));
      at = splice.end;
    }
    if (at < this.bytes.length) pieces.push(this.bytes.subarray(at));
    for (const piece of pieces) length += piece.length;
    return length >= PIECES_FROM ? new SplicedBytes(pieces, length) : Buffer.concat(pieces, length);
  }
}

/**
 * From this size a changed body is sent as its pieces: a new buffer of
 * 128 KiB or more is memory fresh from the system on every request (the
 * allocator hands such blocks back when they are freed), and writing a
 * 556 KB body into one cost 1.4–1.8 ms of page faults where the copy itself
 * is 0.1 ms. Below it a buffer comes from memory the process reuses.
 */
const PIECES_FROM = 128 * 1024;

/** A carried body as the pieces it is made of: the client's bytes (views, not copies) and the changed text between them (the contract's BodyPieces). */
export class SplicedBytes {
  constructor(
    readonly pieces: readonly Buffer[],
    readonly byteLength: number,
  ) {}

  /** The body in one buffer (a copy): for a reader that wants it whole. */
  toBuffer(): Buffer {
    return Buffer.concat(this.pieces, this.byteLength);
  }

  toString(): string {
    return this.toBuffer().toString("utf8");
  }
}

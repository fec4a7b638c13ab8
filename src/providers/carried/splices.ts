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
    else this.list.push({ start: object.close, end: object.close, text: `${object.members.length > 0 ? "," : ""}${JSON.stringify(key)}:${json}` });
  }

  /** A member removed, with the comma that joined it to its neighbour. */
  removeMember(object: ObjectSpan, member: MemberSpan): void {
    const index = object.members.indexOf(member);
    const next = object.members[index + 1];
    if (next) this.list.push({ start: member.start, end: next.start, text: "" });
    else if (index > 0) this.list.push({ start: object.members[index - 1].valueEnd, end: member.valueEnd, text: "" });
    else this.list.push({ start: member.start, end: member.valueEnd, text: "" });
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

  /** The body with every change applied. */
  apply(): Buffer {
    if (this.list.length === 0) return this.bytes;
    const sorted = [...this.list].sort((a, b) => a.start - b.start || a.end - b.end);
    const pieces: Buffer[] = [];
    let at = 0;
    for (const splice of sorted) {
      if (splice.start < at) throw new Error("overlapping changes to a carried body");
      if (splice.start > at) pieces.push(this.bytes.subarray(at, splice.start));
      if (splice.text) pieces.push(Buffer.from(splice.text, "utf8"));
      at = splice.end;
    }
    if (at < this.bytes.length) pieces.push(this.bytes.subarray(at));
    return Buffer.concat(pieces);
  }
}

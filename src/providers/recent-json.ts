import { sameJsonText } from "../foundation/util/same-json.js";

/**
 * The JSON of values that recur from request to request though each request
 * brings its own copy: an agent's tool schemas and its system prompt, the
 * same on every request of every session it opens, parsed (or converted
 * from another wire API) anew each time. Comparing a value with one seen
 * before costs a fraction of serialising it (docs/performance.md#recent-json),
 * so the last few are kept with their bytes.
 */
export class RecentJson {
  /** Most recently used first. */
  private readonly entries: KeptJson[] = [];

  constructor(
    private readonly capacity: number,
    /** Values whose JSON is shorter than this are serialised every time: cheaper than keeping them. */
    private readonly minChars: number,
  ) {}

  /** `JSON.stringify(value)`; undefined where JSON.stringify gives undefined. */
  textOf(value: unknown): string | undefined {
    const kept = this.keptFor(value);
    return kept === undefined || typeof kept === "string" ? kept : kept.text;
  }

  /** `JSON.stringify(value)` as bytes where kept (a string where not); undefined where JSON.stringify gives undefined. */
  bytesOf(value: unknown): Buffer | string | undefined {
    const kept = this.keptFor(value);
    return kept === undefined || typeof kept === "string" ? kept : (kept.bytes ??= Buffer.from(kept.text));
  }

  /** The kept entry equal to `value` (made the most recent), a new one, or the JSON of a value not worth keeping. */
  private keptFor(value: unknown): KeptJson | string | undefined {
    for (let i = 0; i < this.entries.length; i++) {
      const entry = this.entries[i];
      if (!sameJsonText(entry.value, value)) continue;
      if (i > 0) this.entries.unshift(...this.entries.splice(i, 1));
      return entry;
    }
    const json = JSON.stringify(value) as string | undefined; // undefined (and functions) give undefined, as JSON.stringify does
    if (json === undefined || json.length < this.minChars || json.length > MAX_KEPT_CHARS || typeof value !== "object") return json;
    // a copy of its own, parsed from the JSON: nothing a later request does to its value can change what is kept, and a
    // value equal to the copy serialises as the copy does
    const entry: KeptJson = { value: JSON.parse(json), text: json };
    this.entries.unshift(entry);
    if (this.entries.length > this.capacity) this.entries.pop();
    return entry;
  }
}

interface KeptJson {
  readonly value: unknown;
  readonly text: string;
  /** The text encoded, once a caller wanted bytes. */
  bytes?: Buffer;
}

/** A value whose JSON is longer is not kept: eight of them, with their parsed copies, would hold tens of MB. */
const MAX_KEPT_CHARS = 256 * 1024;

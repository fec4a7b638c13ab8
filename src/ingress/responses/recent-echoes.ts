import type { Json } from "../../providers/contract.js";
import { isRecord } from "../../foundation/util/json-readers.js";

/** An echoed member's text is kept from this many characters: a shorter one is serialised faster than it is compared and looked up. */
const KEPT_FROM_CHARS = 1024;
/** Values kept per member: the tool lists of the agents sending requests now. */
const KEPT_PER_MEMBER = 8;

interface KeptEcho {
  /** The member's value parsed back from `text`: a copy of its own, so it and the text always agree, whatever becomes of the request's objects. */
  readonly value: unknown;
  readonly text: string;
}

/**
 * The JSON text of members a Response echoes from its request, for values
 * seen lately (docs/performance.md#response-echo-serialised-once). An agent
 * sends the same tools with every request, in every session, and their
 * JSON is most of the Response's echo: a value equal to a kept one, member
 * by member in the same order with the same strings and numbers, has the
 * same JSON text, and walking the two values costs a fraction of
 * JSON.stringify. One per process (the ResponsesApi's). Removing it:
 * `textOf` returns `JSON.stringify(value)`.
 */
export class RecentEchoes {
  private readonly kept = new Map<string, KeptEcho[]>();

  /** `JSON.stringify(value)`, from memory when an equal value of `member` was serialised lately. */
  textOf(member: string, value: Json): string {
    const recent = this.kept.get(member);
    if (recent) {
      for (let index = 0; index < recent.length; index++) {
        const echo = recent[index];
        if (!sameJsonText(echo.value, value)) continue;
        // the most recent first: the next lookup of this value ends at once
        if (index > 0) recent.unshift(...recent.splice(index, 1));
        return echo.text;
      }
    }
    const text = JSON.stringify(value);
    if (text.length >= KEPT_FROM_CHARS) {
      const parsed: unknown = JSON.parse(text);
      const list = recent ?? [];
      list.unshift({ value: parsed, text });
      if (list.length > KEPT_PER_MEMBER) list.pop();
      this.kept.set(member, list);
    }
    return text;
  }
}

/**
 * Whether two parsed JSON values have the same JSON text: primitives equal
 * (a string by its characters), arrays item by item, objects with the same
 * keys in the same order (JSON.stringify writes them in that order).
 */
export function sameJsonText(kept: unknown, value: unknown): boolean {
  if (kept === value) return true;
  if (Array.isArray(kept)) {
    if (!Array.isArray(value) || kept.length !== value.length) return false;
    for (let index = 0; index < kept.length; index++) if (!sameJsonText(kept[index], value[index])) return false;
    return true;
  }
  if (!isRecord(kept) || !isRecord(value)) return false;
  const keys = Object.keys(value);
  let at = 0;
  // for…in walks the kept value (parsed JSON: own keys only, in Object.keys order)
  for (const key in kept) if (key !== keys[at++] || !sameJsonText(kept[key], value[key])) return false;
  return at === keys.length;
}

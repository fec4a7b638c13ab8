import type { ChatMessage } from "../providers/contract.js";
import { isPlainObject, sameJsonText } from "../foundation/util/same-json.js";

/** A prompt head's stored form: its JSON and the SHA-256 of it (prompt-heads.ts). */
export interface HeadColumns {
  readonly hash: string;
  readonly text: string;
}

/** A copy of a head's JSON value: strings, numbers, booleans and null, in arrays and plain objects. */
type Plain = string | number | boolean | null | undefined | readonly Plain[] | { readonly [key: string]: Plain };

interface RecentHead {
  /** Copies of the head's messages as they were when it was made (a request's objects may change after). */
  readonly messages: readonly Plain[];
  readonly columns: HeadColumns;
}

/** Heads kept: the instructions of the agents sending requests now, each a few tens of KB. */
const KEPT = 8;
/** Nesting beyond this is not kept (the comparison and the copy recurse): no head sent by an agent comes near it. */
const MAX_DEPTH = 16;

/**
 * Recent prompt heads (docs/performance.md#prompt-heads-stored-once): an
 * agent sends the same instructions on the first request of every
 * session, and turning them into JSON and hashing that JSON is most of
 * what storing the head costs. A head whose messages equal one seen
 * lately, structurally, has the same JSON, so its columns are reused:
 * comparing strings is a memory compare, far cheaper than JSON.stringify
 * and SHA-256 of them. Equal means what JSON.stringify writes alike: the
 * same keys in the same order, equal strings, numbers, booleans and null,
 * arrays of the same length, all the way down. That covers a system
 * message whose content is an array of text parts (a Messages request's
 * `system` blocks sent on to an Anthropic route, `cache_control` and all)
 * as well as plain strings. A head holding anything else (a class
 * instance, a function, nesting deeper than MAX_DEPTH) is not kept and is
 * made anew each time. Removing it: `columnsOf` calls `make`.
 */
export class RecentHeads {
  private readonly heads: RecentHead[] = [];

  /** The head's columns: those of an equal head seen lately, else `make`'s (kept when its messages are plain JSON). */
  columnsOf(messages: readonly ChatMessage[], make: (messages: readonly ChatMessage[]) => HeadColumns | undefined): HeadColumns | undefined {
    for (let index = 0; index < this.heads.length; index++) {
      const recent = this.heads[index];
      if (!sameJsonText(recent.messages, messages)) continue;
      // the most recent first: the next lookup of this head ends at once
      if (index > 0) this.heads.unshift(...this.heads.splice(index, 1));
      return recent.columns;
    }
    const columns = make(messages);
    const copies = columns ? plainCopy(messages, 0) : NOT_PLAIN;
    if (columns && copies !== NOT_PLAIN && Array.isArray(copies)) {
      this.heads.unshift({ messages: copies, columns });
      if (this.heads.length > KEPT) this.heads.pop();
    }
    return columns;
  }
}

/** plainCopy's answer for a value it does not keep. */
const NOT_PLAIN = Symbol("not plain JSON");

/** A copy of the value's arrays and objects (its strings shared: they never change), when it holds plain JSON alone. */
export function plainCopy(value: unknown, depth: number): Plain | typeof NOT_PLAIN {
  switch (typeof value) {
    case "string":
    case "boolean":
    case "undefined": // an object's field JSON.stringify leaves out, the same in the copy
      return value;
    case "number":
      // NaN is never equal to itself: such a head would never be found again
      return Number.isNaN(value) ? NOT_PLAIN : value;
    case "object": {
      if (value === null) return null;
      if (depth > MAX_DEPTH) return NOT_PLAIN;
      if (isPlainArray(value)) {
        const copy: Plain[] = [];
        for (const item of value) {
          const itemCopy = plainCopy(item, depth + 1);
          if (itemCopy === NOT_PLAIN) return NOT_PLAIN;
          copy.push(itemCopy);
        }
        return copy;
      }
      if (!isPlainRecord(value)) return NOT_PLAIN;
      const copy: Record<string, Plain> = {};
      for (const key of Object.keys(value)) {
        const fieldCopy = plainCopy(value[key], depth + 1);
        if (fieldCopy === NOT_PLAIN) return NOT_PLAIN;
        copy[key] = fieldCopy;
      }
      return copy;
    }
    default:
      return NOT_PLAIN;
  }
}

/** An array JSON.parse could have made (its prototype Array's: no toJSON of its own). */
function isPlainArray(value: object): value is readonly unknown[] {
  return Array.isArray(value) && Object.getPrototypeOf(value) === Array.prototype;
}

/** An object JSON.parse could have made (a class instance may stringify itself its own way). */
function isPlainRecord(value: object): value is { readonly [key: string]: unknown } {
  return !Array.isArray(value) && isPlainObject(value);
}

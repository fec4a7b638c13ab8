import { isRecord } from "./json-readers.js";

/**
 * Whether two parsed JSON values are equal: objects by their own keys in any
 * order, arrays in order. Walks with for…in rather than key arrays, so a
 * comparison per replayed message on every request allocates nothing.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let index = 0; index < a.length; index++) if (!sameJson(a[index], b[index])) return false;
    return true;
  }
  if (!isRecord(a) || !isRecord(b)) return false;
  const left = a;
  const right = b;
  let keys = 0;
  for (const key in left) {
    if (!Object.hasOwn(right, key) || !sameJson(left[key], right[key])) return false;
    keys++;
  }
  for (const _key in right) keys--;
  return keys === 0;
}

/**
 * Whether `value` is written by JSON.stringify exactly as `kept` is, where
 * `kept` holds plain JSON alone (parsed, or copied as plain objects and
 * arrays): the same strings, numbers, booleans and nulls in plain objects
 * and arrays, keys in the same order (JSON.stringify writes them in that
 * order). A value with anything else in it (NaN, a Date, a class instance
 * that may stringify itself its own way) is not. The memos that reuse a
 * value's JSON for an equal one ask this.
 */
export function sameJsonText(kept: unknown, value: unknown): boolean {
  if (kept === value) return kept === null || typeof kept !== "object";
  if (Array.isArray(kept)) {
    if (!Array.isArray(value) || value.length !== kept.length) return false;
    for (let index = 0; index < kept.length; index++) if (!sameJsonText(kept[index], value[index])) return false;
    return true;
  }
  if (!isRecord(kept) || !isRecord(value) || !isPlainObject(value)) return false;
  const keptKeys = Object.keys(kept);
  const keys = Object.keys(value);
  if (keys.length !== keptKeys.length) return false;
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index];
    if (key !== keptKeys[index] || !sameJsonText(kept[key], value[key])) return false;
  }
  return true;
}

/** An object JSON.parse could have made: no prototype but Object's. */
export function isPlainObject(value: object): boolean {
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

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

import type { Json, JsonObject } from "./contract.js";
import { isJsonObject, readObject } from "../foundation/util/json-readers.js";

// the loose readers live with the JSON types, for every floor; what only plugins need (a shape error for the turn) lives here
export { isJsonObject, parseObject, readArray, readNumber, readObject, readString } from "../foundation/util/json-readers.js";

/**
 * The upstream sent JSON whose shape the plugin cannot read where it needs
 * a value: an entry of a list of tool calls, blocks or parts that is not an
 * object. Reading on would make up a call or drop content, so the turn fails
 * as an upstream error instead (the core relays it as a 502).
 */
export class UpstreamShapeError extends Error {
  constructor(
    /** What was expected there, in the upstream's own terms (`"a tool_calls entry"`). */
    readonly expected: string,
    readonly actual: string,
  ) {
    super(`the upstream sent ${actual} where it should send ${expected} (an object)`);
    this.name = "UpstreamShapeError";
  }
}

/**
 * The value when it is a JSON object; otherwise throws an UpstreamShapeError
 * naming `expected`, a fixed description such as `"a tool_calls entry"` (no
 * string is built unless it throws).
 */
export function requireObject(value: unknown, expected: string): JsonObject {
  const object = readObject(value);
  if (object === undefined) throw new UpstreamShapeError(expected, describe(value));
  return object;
}

/**
 * The array itself, typed as the objects it holds, when every entry is a JSON
 * object (no copy); otherwise throws an UpstreamShapeError naming `expected`
 * for one entry.
 */
export function requireObjects(values: Json[], expected: string): JsonObject[] {
  if (values.every(isJsonObject)) return values;
  throw new UpstreamShapeError(expected, describe(values.find((value) => !isJsonObject(value))));
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (value === undefined) return "nothing";
  return typeof value === "string" ? "a string" : `a ${typeof value}`;
}

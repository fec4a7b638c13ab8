import type { Json, JsonObject } from "./contract.js";

/**
 * Small typed readers for JSON a plugin did not write: an upstream's answer,
 * its stream events, its error bodies. They read loosely, as the codecs are
 * meant to (unknown fields are left alone; a field that is absent, null or of
 * another type reads as undefined), and they narrow instead of asserting, so
 * a value of the wrong type is never taken for the type the code expects:
 * `readString(call.id)`, `readObject(chunk.delta)?.content`.
 *
 * They take the value, not an object and a key: the property is read where
 * the code names it, so each read keeps its own inline cache (one shared
 * `object[key]` read would see every shape of every provider and go
 * megamorphic, measurably slower per stream chunk). None copies or walks
 * anything: a `typeof` check or two on one value.
 */

/**
 * Whether a value is a JSON object (not null, not an array). For a value
 * that came out of `JSON.parse` that is all there is to know: its members
 * are JSON too.
 */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The value when it is a JSON object, else undefined. */
export function readObject(value: unknown): JsonObject | undefined {
  return isJsonObject(value) ? value : undefined;
}

/** The value when it is an array, else undefined. */
export function readArray(value: unknown): Json[] | undefined {
  return Array.isArray(value) ? value : undefined;
}

/** The value when it is a string, else undefined. */
export function readString(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/** The value when it is a finite number, else undefined. */
export function readNumber(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/** A JSON text that holds an object, parsed; undefined when it is not JSON or holds anything else. */
export function parseObject(text: string): JsonObject | undefined {
  try {
    return readObject(JSON.parse(text));
  } catch {
    return undefined;
  }
}

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

import type { Json, JsonObject } from "./json.js";

/**
 * Small typed readers for JSON carrierd did not write: a client's request,
 * an upstream's answer, its stream events, its error bodies. They read loosely, as the codecs are
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

/**
 * Whether a value is an object with keys to read (not null, not an array),
 * whatever made it: reading any of its keys gives an unknown to narrow.
 */
export function isRecord(value: unknown): value is Record<string, unknown> {
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

import type { JsonObject } from "./json.js";

/** Merges `patch` into a copy of `base`: objects merge key by key, anything else in `patch` wins. */
export function deepMerge<T extends Record<string, unknown>>(base: T, patch: JsonObject | undefined): T {
  if (!patch) return base;
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(patch)) {
    const current = out[key];
    out[key] = isPlainObject(current) && isPlainObject(value) ? deepMerge(current, value) : value;
  }
  return out as T;
}

/** Like deepMerge, but keys `base` already has keep their value: request values win over defaults. */
export function mergeDefaults<T extends Record<string, unknown>>(base: T, defaults: JsonObject | undefined): T {
  if (!defaults) return base;
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(defaults)) {
    const current = out[key];
    if (current === undefined) out[key] = value;
    else if (isPlainObject(current) && isPlainObject(value)) out[key] = mergeDefaults(current, value);
  }
  return out as T;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * A value as an error message quotes it: a string as it is, anything else
 * (a number, an object a client sent where a name belongs) as its JSON, so a
 * message never reads "[object Object]".
 */
export function shown(value: unknown): string {
  if (typeof value === "string") return value;
  return JSON.stringify(value) ?? String(value);
}

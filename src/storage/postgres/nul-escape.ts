/**
 * PostgreSQL's `text` cannot hold U+0000 (the server refuses the whole
 * statement), yet a model's answer, a prompt or a carrier may contain one
 * and must come back byte for byte. Such a string is stored escaped: a
 * leading U+0001 marks it, and inside it U+0001 is written as U+0001 U+0002
 * and U+0000 as U+0001 U+0003, so the escape is reversible and the stored
 * text has no NUL. A string that has no NUL and does not start with U+0001
 * (every string in practice) is stored as it is: the check is one scan for
 * NUL, done natively, and nothing is copied.
 */
const MARK = "\u0001";
const MARK_CODE = 1;

/** The text stored for `value`: itself unless it holds a NUL or starts with the mark. */
export function escapeNul(value: string): string {
  if (value.charCodeAt(0) !== MARK_CODE && !value.includes("\u0000")) return value;
  return MARK + value.replace(/[\u0000\u0001]/g, (char) => (char === MARK ? "\u0001\u0002" : "\u0001\u0003"));
}

/** The string `stored` was written for (see escapeNul). */
export function unescapeNul(stored: string): string {
  if (stored.charCodeAt(0) !== MARK_CODE) return stored;
  return stored.slice(1).replace(/\u0001([\u0002\u0003])/g, (_, code: string) => (code === "\u0002" ? MARK : "\u0000"));
}

/** A statement's parameter as stored: strings escaped, and the strings of an array (a `text[]` parameter). */
export function escapeParameter(value: unknown): unknown {
  if (typeof value === "string") return escapeNul(value);
  if (Array.isArray(value)) {
    const list: readonly unknown[] = value;
    // most arrays are hashes or ids: hand the same array on when no element needs the escape
    let escaped: unknown[] | undefined;
    for (let index = 0; index < list.length; index++) {
      const element = list[index];
      if (typeof element !== "string") continue;
      const stored = escapeNul(element);
      if (stored !== element) (escaped ??= [...list])[index] = stored;
    }
    return escaped ?? list;
  }
  return value;
}

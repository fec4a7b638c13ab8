const cache = new Map<string, RegExp>();

/** `*` matches any run of characters (slashes included); everything else is literal. */
export function globMatches(pattern: string, value: string): boolean {
  if (!pattern.includes("*")) return pattern === value;
  let regex = cache.get(pattern);
  if (!regex) {
    const source = pattern
      .split("*")
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
      .join(".*");
    regex = new RegExp(`^${source}$`);
    cache.set(pattern, regex);
  }
  return regex.test(value);
}

/** What a `*` in `pattern` captured from `value` (the first star), for `openrouter/*` → model name. */
export function globCapture(pattern: string, value: string): string | undefined {
  const star = pattern.indexOf("*");
  if (star < 0) return undefined;
  const suffix = pattern.slice(star + 1).replaceAll("*", "");
  return value.slice(star, value.length - suffix.length);
}

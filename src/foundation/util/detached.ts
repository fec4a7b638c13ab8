/**
 * A copy of `text` that does not keep alive the string it was cut from.
 * V8 makes a substring of 13 characters or more a view into its parent: a
 * short prefix kept from a stream's first network read held that whole
 * read (kilobytes) for as long as the stream ran, and the GC copied it at
 * every collection meanwhile. Concatenating and slicing again flattens the
 * view into a string of its own.
 */
export function detached(text: string): string {
  return text.length < 13 ? text : ` ${text}`.slice(1);
}

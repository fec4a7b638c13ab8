/**
 * The first `count` pieces (strings and bytes) as one Buffer: one
 * allocation, byte pieces copied with TypedArray#set, and short ASCII
 * strings (separators, a stream's delta texts) stored by a loop over their
 * characters. A native call per string piece (Buffer.byteLength to size the
 * result, Buffer#write to fill it) would cost most of the join.
 */
export function joinBytes(pieces: readonly (string | Buffer | undefined)[], count = pieces.length): Buffer {
  // a short string is bounded, not measured (a UTF-16 code unit is at most three UTF-8 bytes); a long one is measured
  let bound = 0;
  for (let i = 0; i < count; i++) {
    const piece = pieces[i]!;
    bound += typeof piece !== "string" ? piece.length : piece.length <= SHORT ? piece.length * 3 : Buffer.byteLength(piece);
  }
  const out = Buffer.allocUnsafe(bound);
  let offset = 0;
  for (let i = 0; i < count; i++) {
    const piece = pieces[i]!;
    if (typeof piece !== "string") {
      out.set(piece, offset);
      offset += piece.length;
      continue;
    }
    const ascii = piece.length <= SHORT ? writeAscii(out, piece, offset) : 0;
    offset += ascii === piece.length ? ascii : out.write(piece, offset);
  }
  return offset === bound ? out : out.subarray(0, offset);
}

/** Strings up to this long are tried as ASCII in JS; longer ones are encoded natively at once. */
const SHORT = 64;

/** Writes `text` as ASCII and returns its length, or stops at its first non-ASCII character and returns where (the caller then encodes it whole). */
function writeAscii(out: Buffer, text: string, offset: number): number {
  let at = 0;
  for (; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (code >= 0x80) return at;
    out[offset + at] = code;
  }
  return at;
}

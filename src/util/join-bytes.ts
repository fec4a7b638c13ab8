/**
 * The first `count` pieces (strings and bytes) as one Buffer: one
 * allocation, strings encoded in place, byte pieces copied with
 * TypedArray#set and one-character ASCII strings (separators) stored
 * directly — Buffer#copy and a native write per comma measured ~30% of the
 * join for a replayed history.
 */
export function joinBytes(pieces: readonly (string | Buffer | undefined)[], count = pieces.length): Buffer {
  let size = 0;
  for (let i = 0; i < count; i++) {
    const piece = pieces[i]!;
    size += typeof piece !== "string" ? piece.length : isAsciiChar(piece) ? 1 : Buffer.byteLength(piece);
  }
  const out = Buffer.allocUnsafe(size);
  let offset = 0;
  for (let i = 0; i < count; i++) {
    const piece = pieces[i]!;
    if (typeof piece !== "string") {
      out.set(piece, offset);
      offset += piece.length;
    } else if (isAsciiChar(piece)) {
      out[offset++] = piece.charCodeAt(0);
    } else {
      offset += out.write(piece, offset);
    }
  }
  return out;
}

function isAsciiChar(text: string): boolean {
  return text.length === 1 && text.charCodeAt(0) < 0x80;
}

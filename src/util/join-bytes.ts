/** Strings and byte pieces as one Buffer: one allocation, strings encoded in place. */
export function joinBytes(pieces: readonly (string | Buffer)[]): Buffer {
  let size = 0;
  for (const piece of pieces) size += typeof piece === "string" ? Buffer.byteLength(piece) : piece.length;
  const out = Buffer.allocUnsafe(size);
  let offset = 0;
  for (const piece of pieces) offset += typeof piece === "string" ? out.write(piece, offset) : piece.copy(out, offset);
  return out;
}

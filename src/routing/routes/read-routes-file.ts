import { constants } from "node:fs";
import { open } from "node:fs/promises";
import { errorCode, errorMessage } from "../../foundation/util/error-message.js";

/**
 * The largest route table read, in bytes. A real one is a few KiB; the cap
 * keeps a stray or hostile file (a log written to the wrong path, a YAML
 * bomb) from being read into memory or parsed at all.
 */
export const MAX_ROUTES_BYTES = 1024 * 1024;

/** What was at the path: its text and what it looked like, or why it cannot be a route table. */
export type RoutesRead = { ok: true; text: string; size: number; mtimeMs: number; ino: number } | { ok: false; code: string; message: string };

/**
 * Reads the route table at `path` without ever blocking on what is there.
 * The file is opened non-blocking, so a FIFO's open returns at once instead
 * of waiting for a writer (which would hold a libuv thread and the reload
 * queue forever); what was opened is checked with fstat on the open
 * descriptor, so a path swapped between a check and the open cannot slip a
 * FIFO, device or directory through. Only a regular file of at most
 * MAX_ROUTES_BYTES is read, and the read stops at the cap even if the file
 * grows meanwhile. Symlinks are followed (a ConfigMap mount is made of
 * them); a loop is ELOOP, reported like any other error.
 */
export async function readRoutesFile(path: string, maxBytes = MAX_ROUTES_BYTES): Promise<RoutesRead> {
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (error) {
    return failure(error);
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) return { ok: false, code: "ENOTFILE", message: `not a regular file (${kindOf(stats)})` };
    if (stats.size > maxBytes) return tooLarge(stats.size, maxBytes);
    const buffer = Buffer.allocUnsafe(Math.min(stats.size, maxBytes) + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > maxBytes) return tooLarge(length, maxBytes);
      if (length === buffer.length) break; // grew past what fstat said, but within the cap: take what is there, the next event re-reads
    }
    return { ok: true, text: buffer.toString("utf8", 0, length), size: length, mtimeMs: stats.mtimeMs, ino: stats.ino };
  } catch (error) {
    return failure(error);
  } finally {
    await handle.close().catch(() => undefined);
  }
}

function failure(error: unknown): RoutesRead {
  const code = errorCode(error) ?? "EIO";
  const explained: Record<string, string> = {
    ENOENT: "no such file (deleted or moved away)",
    ELOOP: "a symlink loop",
    EACCES: "permission denied",
    EISDIR: "not a regular file (a directory)",
  };
  return { ok: false, code, message: explained[code] ? `${explained[code]} (${code})` : errorMessage(error) };
}

function tooLarge(size: number, maxBytes: number): RoutesRead {
  return { ok: false, code: "EFBIG", message: `larger than the ${maxBytes}-byte cap (${size} bytes or more); not read` };
}

function kindOf(stats: import("node:fs").Stats): string {
  if (stats.isDirectory()) return "a directory";
  if (stats.isFIFO()) return "a FIFO";
  if (stats.isCharacterDevice()) return "a character device";
  if (stats.isBlockDevice()) return "a block device";
  if (stats.isSocket()) return "a socket";
  return "not a file";
}

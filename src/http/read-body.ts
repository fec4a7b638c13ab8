import type { IncomingMessage } from "node:http";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import type { Readable } from "node:stream";
import { isUtf8 } from "node:buffer";
import { GatewayError } from "../foundation/errors/gateway-error.js";
import { errorMessage } from "../foundation/util/error-message.js";
import { isRecord } from "../foundation/util/json-readers.js";
import { arraySpan, keepSpan, objectSpan, skipSpace } from "../providers/carried/json-spans.js";

const MAX_DEPTH = 64;
const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Reads a JSON body: at most `limit` bytes (413 past it, counted after
 * decompression too), gzip/deflate/br or identity (400 for anything else),
 * strict UTF-8, nesting at most 64 levels (docs/operators.md#limits).
 */
export async function readJsonBody(request: IncomingMessage, limit: number): Promise<unknown> {
  return parseJsonBody(await readBodyBytes(request, limit));
}

/** The body's bytes, decompressed, at most `limit` of them (see readJsonBody). */
export async function readBodyBytes(request: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(request.headers["content-length"]);
  if (Number.isFinite(declared) && declared > limit) throw discardRest(request, tooLarge(limit));
  return collect(request, decodeStream(request), limit);
}

/** A body's bytes as JSON: strict UTF-8, nesting at most 64 levels; a 400 otherwise. */
export function parseJsonBody(bytes: Buffer): unknown {
  if (bytes.length === 0) throw new GatewayError("invalid_json", "request body is empty; expected a JSON object");
  const inPieces = bytes.length >= PIECES_FROM ? parsedInPieces(bytes) : undefined;
  if (inPieces !== undefined) {
    if (deeperThan(inPieces, MAX_DEPTH)) throw new GatewayError("invalid_json", `JSON nested deeper than ${MAX_DEPTH} levels`);
    return inPieces;
  }
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new GatewayError("invalid_json", "request body is not valid UTF-8");
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    if (error instanceof RangeError) throw new GatewayError("invalid_json", `JSON nested deeper than ${MAX_DEPTH} levels`);
    throw new GatewayError("invalid_json", `request body is not valid JSON: ${errorMessage(error)}`);
  }
  if (deeperThan(value, MAX_DEPTH)) throw new GatewayError("invalid_json", `JSON nested deeper than ${MAX_DEPTH} levels`);
  return value;
}

/**
 * From this size a body is parsed member by member (see parsedInPieces):
 * V8 puts a string over 128 KiB in its large-object space, fresh pages each
 * time, and making one of a 556 KB body cost 2.1 ms where parsing it cost 0.6 ms.
 */
const PIECES_FROM = 128 * 1024;

/**
 * A large body that is a JSON object, parsed a top-level member at a time
 * and `messages` or `input` an element at a time, each from a string of its
 * own bytes: the same value as JSON.parse of the whole text (later members
 * of a repeated key win, in the first one's place), without one string of
 * the whole body (1.0 ms instead of 2.9 for Claude Code's 100-turn request).
 * Undefined for anything else, invalid or not (no object, a byte order mark,
 * text after the object, bytes that are not UTF-8 or not JSON): the caller
 * parses the whole text then, and its errors are the ones a client sees.
 */
function parsedInPieces(bytes: Buffer): Record<string, unknown> | undefined {
  if (!isUtf8(bytes)) return undefined;
  try {
    // one pass over the bytes: `messages` and `input` have their elements read with the object's members
    const top = objectSpan(bytes, skipSpace(bytes, 0), LISTED);
    if (skipSpace(bytes, top.close + 1) !== bytes.length) return undefined;
    const value: Record<string, unknown> = {};
    for (const member of top.members) {
      const listed = LISTED.has(member.key) && bytes[member.valueStart] === 0x5b;
      const parsed: unknown = listed
        ? arraySpan(bytes, member.valueStart).elements.map((element): unknown => JSON.parse(bytes.toString("utf8", element.start, element.end)))
        : JSON.parse(bytes.toString("utf8", member.valueStart, member.valueEnd));
      // an own property, as JSON.parse makes it, even for "__proto__"
      Object.defineProperty(value, member.key, { value: parsed, enumerable: true, writable: true, configurable: true });
    }
    // a carried body is spliced along these spans (src/providers/carried/), not read again
    keepSpan(bytes, top);
    return value;
  } catch {
    return undefined;
  }
}

/** The top-level members parsed an element at a time: a conversation's history. */
const LISTED: ReadonlySet<string> = new Set(["messages", "input"]);

function decodeStream(request: IncomingMessage): Readable {
  const encoding = String(request.headers["content-encoding"] ?? "identity")
    .trim()
    .toLowerCase();
  switch (encoding) {
    case "":
    case "identity":
      return request;
    case "gzip":
    case "x-gzip":
      return request.pipe(createGunzip());
    case "deflate":
      return request.pipe(createInflate());
    case "br":
      return request.pipe(createBrotliDecompress());
    default:
      request.resume();
      throw new GatewayError("unsupported_encoding", `unsupported Content-Encoding "${encoding}" (use identity, gzip, deflate or br)`);
  }
}

/** Listens rather than async-iterates: a body arrives in one or two reads, and each iteration step cost promises. */
function collect(request: IncomingMessage, stream: Readable, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const fail = (error: GatewayError) => {
      stream.off("data", onData);
      if (stream !== request) stream.destroy(); // the decompressor, never the socket the answer goes out on
      reject(discardRest(request, error));
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) fail(tooLarge(limit));
      else chunks.push(chunk);
    };
    stream.on("data", onData);
    stream.once("end", () => resolve(Buffer.concat(chunks, size)));
    stream.once("error", (error: Error) => fail(new GatewayError("invalid_request", `could not read the request body: ${error.message}`)));
  });
}

/**
 * Stops reading a body we refuse. Destroying the request would destroy its
 * socket, and the client would never see the 413; instead the rest is
 * discarded and the error response closes the connection (see sendError).
 */
function discardRest(request: IncomingMessage, error: GatewayError): GatewayError {
  request.unpipe();
  request.resume();
  return error;
}

function tooLarge(limit: number): GatewayError {
  return new GatewayError("request_too_large", `request body is larger than ${limit} bytes`);
}

/**
 * Whether JSON nests objects and arrays more than `limit` levels deep.
 * Recursive, yet bounded: it never descends past `limit`, so a hostile body
 * cannot blow the stack; for…in walks allocate nothing per node.
 */
function deeperThan(value: unknown, limit: number): boolean {
  if (value === null || typeof value !== "object") return false;
  if (limit === 0) return true;
  if (Array.isArray(value)) {
    for (const child of value) if (deeperThan(child, limit - 1)) return true;
    return false;
  }
  if (!isRecord(value)) return false;
  for (const key in value) if (deeperThan(value[key], limit - 1)) return true;
  return false;
}

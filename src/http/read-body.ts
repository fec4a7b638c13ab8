import type { IncomingMessage } from "node:http";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import type { Readable } from "node:stream";
import { GatewayError } from "../foundation/errors/gateway-error.js";
import { errorMessage } from "../foundation/util/error-message.js";
import { isRecord } from "../foundation/util/json-readers.js";

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

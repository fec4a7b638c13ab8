import type { IncomingMessage, ServerResponse } from "node:http";
import { noteRequestedModel } from "../foundation/logging/access-log.js";

/** A refused request's unread body is read for its model only up to this size; a larger one is discarded unread. */
const MAX_PEEK_BYTES = 64 * 1024;
/** And only if it arrives this soon: the refusal is not held back waiting for a slow client. */
const PEEK_WAIT_MS = 1000;

/**
 * A request refused before its body was read (no key, an unknown path, a
 * wrong method, a bad X-Session-Id) still logs the model its body named.
 * Only a small, plain (not compressed) JSON body with a Content-Length is
 * read, once, and only for the access log; anything else stays unread.
 */
export async function noteModelOfUnreadBody(request: IncomingMessage, response: ServerResponse): Promise<void> {
  if (request.readableDidRead || request.readableEnded) return;
  const length = Number(request.headers["content-length"]);
  if (!Number.isInteger(length) || length <= 0 || length > MAX_PEEK_BYTES) return;
  const encoding = String(request.headers["content-encoding"] ?? "identity").toLowerCase();
  if (encoding !== "identity" && encoding !== "") return;
  const bytes = await readWithin(request, PEEK_WAIT_MS);
  if (!bytes) return;
  try {
    noteRequestedModel(response, JSON.parse(bytes.toString("utf8")));
  } catch {
    // not JSON: nothing to name
  }
}

/** The whole body, or undefined if it did not arrive in time (the rest is then discarded). */
function readWithin(request: IncomingMessage, waitMs: number): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const done = (bytes: Buffer | undefined) => {
      clearTimeout(timer);
      request.off("data", onData);
      request.off("end", onEnd);
      request.off("error", onError);
      if (!bytes) request.resume();
      resolve(bytes);
    };
    const onData = (chunk: Buffer) => chunks.push(chunk);
    const onEnd = () => done(Buffer.concat(chunks));
    const onError = () => done(undefined);
    const timer = setTimeout(() => done(undefined), waitMs);
    request.on("data", onData);
    request.once("end", onEnd);
    request.once("error", onError);
  });
}

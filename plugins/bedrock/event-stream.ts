import { EventStreamCodec } from "@smithy/core/event-streams";
import { type JsonObject, parseObject } from "../../src/providers/plugin-api.js";

/** One message of an AWS event stream (`application/vnd.amazon.eventstream`). */
export interface StreamMessage {
  /** `event` or `exception`. */
  readonly messageType: string;
  /** The event name (`contentBlockDelta`, `chunk`…) or the exception name (`throttlingException`…). */
  readonly type: string;
  readonly payload: JsonObject;
}

const codec = new EventStreamCodec(
  (bytes: Uint8Array) => new TextDecoder().decode(bytes),
  (text) => new TextEncoder().encode(text),
);

/**
 * AWS event-stream frames → messages. Each frame starts with its total
 * length (big-endian u32); the codec checks both CRCs and parses the headers.
 * Network chunks cut frames anywhere, so bytes are buffered until a whole
 * frame is there.
 */
export async function* readEventStream(body: AsyncIterable<Uint8Array>): AsyncIterable<StreamMessage> {
  let buffer = Buffer.alloc(0);
  for await (const chunk of body) {
    buffer = buffer.length === 0 ? Buffer.from(chunk) : Buffer.concat([buffer, chunk]);
    while (buffer.length >= 4 && buffer.length >= buffer.readUInt32BE(0)) {
      const length = buffer.readUInt32BE(0);
      yield toMessage(codec.decode(buffer.subarray(0, length)));
      buffer = buffer.subarray(length);
    }
  }
  if (buffer.length > 0) throw new Error(`AWS event stream ended inside a frame (${buffer.length} bytes left)`);
}

function toMessage(message: { headers: Record<string, { type: string; value: unknown }>; body: Uint8Array }): StreamMessage {
  const header = (name: string) => {
    const value = message.headers[name]?.value;
    return typeof value === "string" ? value : "";
  };
  const text = new TextDecoder().decode(message.body);
  // a payload that is not a JSON object (an exception's plain-text message) is kept as its message
  const payload = text ? (parseObject(text) ?? { message: text }) : {};
  const messageType = header(":message-type") || "event";
  return { messageType, type: messageType === "exception" ? header(":exception-type") : header(":event-type"), payload };
}

/** Encodes one event frame (for emulators and tests). */
export function encodeEvent(type: string, payload: unknown, messageType: "event" | "exception" = "event"): Uint8Array {
  const headers: Record<string, { type: "string"; value: string }> = {
    ":message-type": { type: "string", value: messageType },
    ":content-type": { type: "string", value: "application/json" },
  };
  headers[messageType === "exception" ? ":exception-type" : ":event-type"] = { type: "string", value: type };
  return codec.encode({ headers, body: new TextEncoder().encode(JSON.stringify(payload)) });
}

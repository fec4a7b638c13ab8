import { createParser, type EventSourceMessage } from "eventsource-parser";
import { describe, expect, test } from "vitest";
import { carriedErrorFrame } from "../../src/ingress/carried/carried-answer.js";
import { errorEvent } from "../../src/ingress/messages/errors.js";
import { geminiFailureFrame } from "../../src/ingress/gemini/errors.js";
import { GatewayError } from "../../src/foundation/errors/gateway-error.js";

/** What an SSE reader makes of the bytes a carried stream ended with. */
function eventsOf(text: string): EventSourceMessage[] {
  const events: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => events.push(event) });
  parser.feed(text);
  return events;
}

// an upstream cut off by a deadline mid-event: its last bytes end mid-line
const CUT = 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","te';

describe("a carried stream's error event after an upstream cut off mid-line", () => {
  test("Messages: the upstream's own error body is an `error` event of its own, each of its lines a data line", () => {
    const refusal = new GatewayError("upstream_error", "overloaded", null, {
      status: 529,
      upstreamBody: '{"type":"error",\n"error":{"type":"overloaded_error","message":"Overloaded"}}',
    });
    const events = eventsOf(CUT + carriedErrorFrame(errorEvent)(refusal));
    expect(events.at(-1)).toMatchObject({ event: "error" });
    expect(JSON.parse(events.at(-1)!.data)).toEqual({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } });
  });

  test("Messages: carrierd's own error (a deadline) is the door's error event, not joined to the cut line", () => {
    const deadline = new GatewayError("upstream_timeout", "the upstream went silent past deadlines.idle");
    const events = eventsOf(CUT + carriedErrorFrame(errorEvent)(deadline));
    expect(events.at(-1)).toMatchObject({ event: "error" });
    expect(JSON.parse(events.at(-1)!.data)).toMatchObject({ type: "error", error: { message: expect.stringContaining("deadlines.idle") } });
  });

  test("Gemini: an unnamed data event holding Google's error body", () => {
    const cut = 'data: {"candidates":[{"content":{"parts":[{"text":"hal';
    const refusal = new GatewayError("upstream_error", "unavailable", null, {
      status: 503,
      upstreamBody: '{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}',
    });
    const events = eventsOf(cut + carriedErrorFrame(geminiFailureFrame, false)(refusal));
    // the cut event ends where the upstream was cut; the error is the next one
    expect(events.map((event) => event.data)).toEqual([cut.slice("data: ".length), expect.any(String)]);
    expect(JSON.parse(events[1]!.data)).toEqual({ error: { code: 503, message: "The model is overloaded.", status: "UNAVAILABLE" } });
  });
});

import type { GatewayEvent } from "../events/event-bus.js";
import { CONTROL, WIRE_TEXT, type GapNotice, type HubEvent } from "../events/event-feed.js";

/**
 * One event in the stream: `t` (type) and `s` (session id, "" for none) so a
 * reader can filter without parsing, and `e`, the event's JSON text as the
 * publishing instance serialised it.
 */
export function entryFields(event: GatewayEvent | GapNotice): string[] {
  return ["t", event.type, "s", typeof event.session_id === "string" ? event.session_id : "", "e", JSON.stringify(event)];
}

/** What XREAD and XRANGE return per entry, as buffers: the id and the flat field list. */
export type RawEntry = [id: Buffer, fields: Buffer[]];

const CLOSING_BRACE = 0x7d;

/**
 * A stream entry as the hub takes it: type and session for the filter, and
 * the text subscribers receive, the publisher's JSON with `event_id` added
 * before its closing brace (no parse, no re-serialisation). Gap notices that
 * an instance wrote are control messages every connection receives.
 */
export function hubEventOf([rawId, fields]: RawEntry): HubEvent | undefined {
  let type: string | undefined;
  let session: string | undefined;
  let text: Buffer | undefined;
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const name = fields[i]!.toString("latin1");
    if (name === "t") type = fields[i + 1]!.toString("utf8");
    else if (name === "s") session = fields[i + 1]!.toString("utf8");
    else if (name === "e") text = fields[i + 1];
  }
  if (type === undefined || text === undefined || text.length < 2 || text[text.length - 1] !== CLOSING_BRACE) return undefined;
  const id = rawId.toString("latin1");
  const wire = Buffer.concat([text.subarray(0, text.length - 1), Buffer.from(`,"event_id":"${id}"}`, "latin1")]);
  return { type, session_id: session || undefined, event_id: id, [WIRE_TEXT]: wire, ...(type === "gap" ? { [CONTROL]: true as const } : {}) };
}

/** A gap notice raised by this instance (not from the stream), for its own subscribers. */
export function gapEvent(notice: GapNotice): HubEvent {
  return { type: "gap", [WIRE_TEXT]: Buffer.from(JSON.stringify(notice)), [CONTROL]: true };
}

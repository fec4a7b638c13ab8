import { keyOf, withKey, type GatewayEvent } from "../../foundation/event-bus/event-bus.js";
import { CONTROL, WIRE_TEXT, type GapNotice, type HubEvent } from "../event-feed.js";

const NEWLINE = 0x0a;
const CLOSING_BRACE = 0x7d;

/**
 * One stream entry holds the events one instance published within one flush:
 * `e`, their JSON texts as the publisher serialised them, one per line (JSON
 * text has no raw newline), and beside it `t` and `s`, their types and
 * session ids ("" for none) line by line, so a reader filters without
 * parsing; `k`, the data scope of the access key each event belongs to (""
 * for none: an opaque random id, never a key's name or secret), so every
 * instance shows a connection only the events of the keys it is granted. One XADD per flush rather than per event is what keeps the cost
 * per streamed token small.
 */
export function entryFields(events: readonly (GatewayEvent | GapNotice)[]): string[] {
  let types = "";
  let sessions = "";
  let keys = "";
  let texts = "";
  for (let i = 0; i < events.length; i++) {
    const event = events[i];
    const separator = i === 0 ? "" : "\n";
    types += separator + event.type;
    sessions += separator + (typeof event.session_id === "string" ? event.session_id : "");
    keys += separator + (keyOf(event) ?? "");
    texts += separator + JSON.stringify(event);
  }
  return ["t", types, "s", sessions, "k", keys, "e", texts];
}

/** What XREAD and XRANGE return per entry, as buffers: the id and the flat field list. */
export type RawEntry = [id: Buffer, fields: Buffer[]];

/** The entry's id. */
export function entryId(entry: RawEntry): string {
  return entry[0].toString("latin1");
}

/**
 * An entry's events as the hub takes them: type and session for the filter,
 * and the text subscribers receive, the publisher's JSON with `event_id`
 * (`<entry id>:<index>`) added before its closing brace: no parse, no
 * re-serialisation. Gap notices an instance wrote are control messages that
 * every connection receives.
 */
export function hubEventsOf(entry: RawEntry): HubEvent[] {
  const [, fields] = entry;
  let types: string[] | undefined;
  let sessions: string[] | undefined;
  let keys: string[] | undefined;
  let texts: Buffer | undefined;
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const name = fields[i].toString("latin1");
    if (name === "t") types = fields[i + 1].toString("utf8").split("\n");
    else if (name === "s") sessions = fields[i + 1].toString("utf8").split("\n");
    else if (name === "k") keys = fields[i + 1].toString("utf8").split("\n");
    else if (name === "e") texts = fields[i + 1];
  }
  if (!types || !texts) return [];
  const id = entryId(entry);
  const events: HubEvent[] = [];
  let start = 0;
  for (let index = 0; index < types.length && start < texts.length; index++) {
    let end = texts.indexOf(NEWLINE, start);
    if (end < 0) end = texts.length;
    const text = texts.subarray(start, end);
    start = end + 1;
    if (text.length < 2 || text[text.length - 1] !== CLOSING_BRACE) continue;
    const eventId = `${id}:${index}`;
    const wire = Buffer.concat([text.subarray(0, text.length - 1), Buffer.from(`,"event_id":"${eventId}"}`, "latin1")]);
    const type = types[index];
    const event: { -readonly [K in keyof HubEvent]: HubEvent[K] } = {
      type,
      session_id: sessions?.[index] || undefined,
      event_id: eventId,
      [WIRE_TEXT]: wire,
    };
    withKey(event, keys?.[index] || undefined);
    if (type === "gap") event[CONTROL] = true;
    events.push(event);
  }
  return events;
}

/** A gap notice raised by this instance (not from the stream), for its own subscribers. */
export function gapEvent(notice: GapNotice): HubEvent {
  return { type: "gap", [WIRE_TEXT]: Buffer.from(JSON.stringify(notice)), [CONTROL]: true };
}

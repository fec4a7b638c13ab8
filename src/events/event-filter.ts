import { EVENT_TYPES } from "../foundation/event-bus/event-bus.js";

const KNOWN_TYPES = new Set<string>(EVENT_TYPES);
/** What a session id may look like (docs/api.md#sessions-x-session-id). */
const SESSION_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const MAX_SESSIONS = 1000;

/**
 * What one connection wants. `sessions` undefined means every session, and
 * then events that belong to no session (route reloads) pass too; a list of
 * ids admits only events carrying one of those `session_id`s.
 */
export class EventFilter {
  static readonly all = new EventFilter(undefined, undefined);

  private constructor(
    private readonly sessions: ReadonlySet<string> | undefined,
    private readonly types: ReadonlySet<string> | undefined,
  ) {}

  matches(event: { readonly type: string; readonly session_id?: string }): boolean {
    if (this.types && !this.types.has(event.type)) return false;
    if (!this.sessions) return true;
    return typeof event.session_id === "string" && this.sessions.has(event.session_id);
  }

  /** The acknowledgement body: what is now in force, spelled out. */
  describe(): { sessions: string[]; events: string[] } {
    return { sessions: this.sessions ? [...this.sessions] : ["*"], events: this.types ? [...this.types] : [...EVENT_TYPES] };
  }

  /** Parses a subscribe message's `sessions` and `events`; both optional, absent or empty meaning all. */
  static parse(sessions: unknown, events: unknown): EventFilter | { error: string } {
    const sessionList = stringList(sessions, "sessions");
    if ("error" in sessionList) return sessionList;
    const typeList = stringList(events, "events");
    if ("error" in typeList) return typeList;
    if (sessionList.values.length > MAX_SESSIONS) return { error: `sessions: at most ${MAX_SESSIONS} ids` };
    const badId = sessionList.values.find((id) => id !== "*" && !SESSION_ID.test(id));
    if (badId !== undefined) return { error: `sessions: ${JSON.stringify(badId.slice(0, 140))} is not a session id ([A-Za-z0-9._:-]{1,128}) or "*"` };
    const unknown = typeList.values.find((type) => !KNOWN_TYPES.has(type));
    if (unknown !== undefined) return { error: `events: unknown event type ${JSON.stringify(unknown.slice(0, 64))}; known: ${EVENT_TYPES.join(", ")}` };
    const everySession = sessionList.values.length === 0 || sessionList.values.includes("*");
    const everyType = typeList.values.length === 0;
    return new EventFilter(everySession ? undefined : new Set(sessionList.values), everyType ? undefined : new Set(typeList.values));
  }
}

function stringList(value: unknown, name: string): { values: string[] } | { error: string } {
  if (value === undefined || value === null) return { values: [] };
  if (!Array.isArray(value) || !value.every((item) => typeof item === "string")) return { error: `${name} must be an array of strings` };
  return { values: value };
}

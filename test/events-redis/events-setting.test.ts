import { expect, test } from "vitest";
import { parseEventsSetting, redactUrl } from "../../src/foundation/config/events-setting.js";
import { compareEventIds, EVENT_ID } from "../../src/events/event-feed.js";

test("events: local by default, a Redis URL with the stream settings from the environment, anything else refused", () => {
  expect(parseEventsSetting(undefined, {})).toEqual({ backend: "local" });
  expect(parseEventsSetting(" local ", {})).toEqual({ backend: "local" });
  expect(
    parseEventsSetting("redis://:pw@cache:6380/2", { CARRIERD_EVENTS_STREAM: "team:events", CARRIERD_EVENTS_MAXLEN: "5000", CARRIERD_EVENTS_QUEUE: "64" }),
  ).toEqual({
    backend: "redis",
    url: "redis://:pw@cache:6380/2",
    displayUrl: "redis://:***@cache:6380/2",
    stream: "team:events",
    maxLength: 5000,
    queueLimit: 64,
  });
  expect(parseEventsSetting("rediss://cache", {})).toMatchObject({ backend: "redis", stream: "carrierd:events", maxLength: 10_000, queueLimit: 50_000 });
  expect(() => parseEventsSetting("postgres://u:secret@db/x", {})).toThrow(/invalid events setting: postgres:\/\/\*\*\*:\*\*\*@db\/x/);
  expect(() => parseEventsSetting("redis", {})).toThrow(/use "local" or a redis:\/\/ URL/);
  expect(() => parseEventsSetting("redis://cache", { CARRIERD_EVENTS_MAXLEN: "0" })).toThrow(/CARRIERD_EVENTS_MAXLEN/);
  expect(() => parseEventsSetting("redis://cache", { CARRIERD_EVENTS_QUEUE: "lots" })).toThrow(/CARRIERD_EVENTS_QUEUE/);
});

test("URLs lose their credentials for display, and text that is not a URL keeps only its scheme", () => {
  expect(redactUrl("redis://user:pw@host:6379/0")).toBe("redis://***:***@host:6379/0");
  expect(redactUrl("redis://host:6379")).toBe("redis://host:6379");
  expect(redactUrl("redis://:p@ss word@host")).not.toContain("ss word");
  expect(redactUrl("not a url with secret")).toBe("***");
});

test("event ids order by entry, then by index; an id without index stands for its entry's last event", () => {
  const ids = ["10-0:1", "9-5:0", "10-0", "10-0:0", "10-1:0", "9-10:3"];
  expect([...ids].sort(compareEventIds)).toEqual(["9-5:0", "9-10:3", "10-0:0", "10-0:1", "10-0", "10-1:0"]);
  expect(compareEventIds("1796170748580-0:46", "1796170748580-0:46")).toBe(0);
  expect(["1-0", "1-0:3", "1796170748580-12:0"].every((id) => EVENT_ID.test(id))).toBe(true);
  expect(["1-", "-1", "1-0:", "1-0:x", "yesterday", "1-0:1:2"].some((id) => EVENT_ID.test(id))).toBe(false);
});

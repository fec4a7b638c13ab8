import "reflect-metadata";
import { expect, test } from "vitest";
import { fingerprintOf } from "../../src/conversation/fingerprint.js";
import { openDatabase } from "../../src/storage/sqlite/database.js";
import { SQLITE_MIGRATIONS } from "../../src/storage/sqlite/migrations.js";
import { SqliteStorage } from "../../src/storage/sqlite/sqlite-storage.js";
import { nextMillisecond } from "../support/wait-for.js";

const store = new SqliteStorage(openDatabase(":memory:", SQLITE_MIGRATIONS), undefined);
let counter = 0;
function turn(sessionId: string, model: string) {
  const id = `turn_listing_${++counter}`;
  store.writes.saveNow({
    id,
    sessionId,
    keyHash: "k",
    parentTurnId: undefined,
    model,
    plugin: "openai-compatible",
    provider: "p",
    host: "h",
    upstreamModel: "m",
    prompt: [],
    content: `answer ${counter}`,
    toolCalls: [],
    reasoningText: "",
    reasoningDetails: undefined,
    nativeRecord: undefined,
    usage: undefined,
    finishReason: "stop",
    upstreamId: undefined,
    fingerprint: fingerprintOf(`answer ${counter}`, []),
  });
}
// ISO timestamps have millisecond resolution: each turn below is stamped a later millisecond than the one before
const tick = nextMillisecond;

test("a session's last activity and model are its newest turn's, though a turn no longer writes the session row", async () => {
  turn("sess_old", "model-a");
  await tick();
  turn("sess_new", "model-a");
  expect((await store.sessions.list({ limit: 10 })).map((row) => row.id)).toEqual(["sess_new", "sess_old"]);
  await tick();
  turn("sess_old", "model-b");
  const [first, second] = await store.sessions.list({ limit: 10 });
  expect(first).toMatchObject({ id: "sess_old", model: "model-b", turns: 2 });
  expect(second).toMatchObject({ id: "sess_new", model: "model-a", turns: 1 });
  expect(first!.updatedAt > first!.createdAt).toBe(true);
  expect(await store.sessions.show("sess_old")).toMatchObject({ model: "model-b", updatedAt: first!.updatedAt });
});

test("a branch is as recent as its creation, though its copied turns are older", async () => {
  await tick();
  await store.sessions.branch("sess_new", "sess_branch", undefined);
  const [top] = await store.sessions.list({ limit: 10 });
  expect(top).toMatchObject({ id: "sess_branch", parentId: "sess_new", turns: 1, model: "model-a" });
});

import "reflect-metadata";
import { expect, test } from "vitest";
import type { ChatMessage, ToolCall } from "../../src/providers/contract.js";
import { fingerprintOf } from "../../src/conversation/fingerprint.js";
import { keyScope } from "../../src/turn/sessions/key-scope.js";
import { sessionReads } from "../support/session-reads.js";
import { findSession } from "../../src/turn/sessions/session-finder.js";
import { openDatabase } from "../../src/storage/sqlite/database.js";
import { SQLITE_MIGRATIONS } from "../../src/storage/sqlite/migrations.js";
import { SqliteStorage } from "../../src/storage/sqlite/sqlite-storage.js";

const store = new SqliteStorage(openDatabase(":memory:", SQLITE_MIGRATIONS), undefined);
let counter = 0;
function save(sessionId: string, keyHash: string, content: string, toolCalls: ToolCall[] = []): string {
  const id = `turn_${++counter}`;
  store.writes.saveNow({
    id,
    sessionId,
    keyHash,
    parentTurnId: undefined,
    model: "m",
    plugin: "openai-compatible",
    provider: "p",
    host: "h",
    upstreamModel: "m",
    prompt: [],
    content,
    toolCalls,
    reasoningText: `reasoning of ${id}`,
    reasoningDetails: undefined,
    nativeRecord: undefined,
    usage: undefined,
    finishReason: "stop",
    upstreamId: undefined,
    fingerprint: fingerprintOf(content, toolCalls),
  });
  return id;
}
const assistant = (content: string): ChatMessage => ({ role: "assistant", content });

test("matching is scoped to the API key: another key's identical turn is invisible", async () => {
  const mine = keyScope("key-one");
  const theirs = keyScope("key-two");
  save("sess_theirs", theirs, "Paris is the capital.");
  expect(
    (
      await findSession(
        sessionReads(store),
        mine,
        [{ role: "user", content: "q" }, assistant("Paris is the capital."), { role: "user", content: "and?" }],
        undefined,
      )
    ).sessionId,
  ).toBeUndefined();
  const own = save("sess_mine", mine, "Paris is the capital.");
  const found = await findSession(
    sessionReads(store),
    mine,
    [{ role: "user", content: "q" }, assistant("Paris is the capital."), { role: "user", content: "and?" }],
    undefined,
  );
  expect(found).toMatchObject({ sessionId: "sess_mine", parentTurnId: own });
});

test("a fingerprint in several sessions resolves to the most recent; the other messages prefer that session", async () => {
  const scope = keyScope("key-three");
  save("sess_old", scope, "Hello! How can I help?");
  const oldSecond = save("sess_old", scope, "Sure, here it is.");
  const newFirst = save("sess_new", scope, "Hello! How can I help?");
  const newSecond = save("sess_new", scope, "Sure, here it is.");
  const found = await findSession(
    sessionReads(store),
    scope,
    [assistant("Hello! How can I help?"), { role: "user", content: "x" }, assistant("Sure, here it is.")],
    undefined,
  );
  expect(found.sessionId).toBe("sess_new");
  expect([...found.turnIds.values()]).toEqual([newFirst, newSecond]);
  expect(found.turnIds.get(2)).not.toBe(oldSecond);
});

test("explicit session: fingerprint first, else the k-th assistant message is turn k, else the same turn elsewhere", async () => {
  const scope = keyScope("key-four");
  const first = save("explicit-1", scope, "Original wording.");
  const second = save("explicit-1", scope, "Second answer.");
  const found = await findSession(sessionReads(store), scope, [assistant("Re-rendered *wording*."), assistant("Second answer.")], "explicit-1");
  expect(found.sessionId).toBe("explicit-1");
  expect([...found.turnIds.values()]).toEqual([first, second]);
  const fresh = await findSession(sessionReads(store), scope, [assistant("Second answer."), assistant("Never stored.")], "brand-new");
  expect(fresh.sessionId).toBe("brand-new");
  expect([...fresh.turnIds]).toEqual([[0, second]]);
});

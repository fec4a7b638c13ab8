import "reflect-metadata";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { fingerprintOf } from "../../src/conversation/fingerprint.js";
import { openDatabase } from "../../src/storage/sqlite/database.js";
import { SQLITE_MIGRATIONS } from "../../src/storage/sqlite/migrations.js";
import { SqliteStorage } from "../../src/storage/sqlite/sqlite-storage.js";

// Two connections to one state.db: the gateway's, and what a CLI command in another process opens.
const home = mkdtempSync(join(tmpdir(), "carrierd-cache-"));
const file = join(home, "state.db");
const gatewayDb = openDatabase(file, SQLITE_MIGRATIONS);
const cliDb = openDatabase(file, SQLITE_MIGRATIONS);
const gateway = new SqliteStorage(gatewayDb, undefined);
const cli = new SqliteStorage(cliDb, undefined);
afterAll(() => {
  gatewayDb.close();
  cliDb.close();
  rmSync(home, { recursive: true, force: true });
});

const key = "key-hash";
let counter = 0;
function save(store: SqliteStorage, sessionId: string, content: string): string {
  const id = `turn_cache_${++counter}`;
  store.writes.saveNow({
    id,
    sessionId,
    keyHash: key,
    parentTurnId: undefined,
    model: "m",
    plugin: "openai-compatible",
    provider: "p",
    host: "h",
    upstreamModel: "m",
    prompt: [],
    content,
    toolCalls: [],
    reasoningText: `reasoning of ${id}`,
    reasoningDetails: [{ type: "reasoning.encrypted", data: `blob-${id}` }],
    nativeRecord: undefined,
    usage: undefined,
    finishReason: "stop",
    upstreamId: undefined,
    fingerprint: fingerprintOf(content, []),
  });
  return id;
}
const matchIds = (store: SqliteStorage, content: string) =>
  (store.reads.matchesFor(key, [fingerprintOf(content, [])]).get(fingerprintOf(content, [])) ?? []).map((match) => match.id);

test("the gateway's own writes keep the cached lookups exact: a new turn is the newest match at once", () => {
  expect(matchIds(gateway, "Hello there.")).toEqual([]); // a remembered miss
  const first = save(gateway, "sess_a", "Hello there.");
  expect(matchIds(gateway, "Hello there.")).toEqual([first]);
  const second = save(gateway, "sess_b", "Hello there.");
  expect(matchIds(gateway, "Hello there.")).toEqual([second, first]);
  expect(gateway.reads.replaySources(new Map([[second, second]])).get(second)).toMatchObject({
    sessionId: "sess_b",
    reasoningText: `reasoning of ${second}`,
    reasoningDetails: [{ type: "reasoning.encrypted", data: `blob-${second}` }],
  });
});

// The lookups of one turn of the event loop share one read of data_version;
// the next request (here: after a setImmediate) sees another process's write.
const nextRequest = () => new Promise((resolve) => setImmediate(resolve));

test("a session removed by another process (carrierd sessions rm) is never replayed from memory", async () => {
  const turn = save(gateway, "sess_doomed", "Doomed answer.");
  expect(matchIds(gateway, "Doomed answer.")).toEqual([turn]);
  expect(gateway.reads.replaySources(new Map([[turn, turn]])).has(turn)).toBe(true);
  expect(await cli.sessions.remove("sess_doomed")).toBe(true);
  await nextRequest();
  expect(matchIds(gateway, "Doomed answer.")).toEqual([]);
  expect(gateway.reads.replaySources(new Map([[turn, turn]])).has(turn)).toBe(false);
});

test("a turn written by another process is found, though the miss was remembered", async () => {
  expect(matchIds(gateway, "Written elsewhere.")).toEqual([]);
  const turn = save(cli, "sess_cli", "Written elsewhere.");
  await nextRequest();
  expect(matchIds(gateway, "Written elsewhere.")).toEqual([turn]);
});

test("a verdict or a session's model config changed by another process is in force for the next request", async () => {
  const rejection = {
    provider: "p",
    host: "h",
    model: "m",
    fields: ["reasoning_content"],
    status: 400,
    message: "unknown field",
    keyHash: "key-a",
    clientModel: "m",
  };
  await cli.verdicts.record({ ...rejection, sessionId: "sess_verdict" });
  await nextRequest();
  expect(gateway.verdicts.fieldsFor("p", "h", "m")).toEqual(["reasoning_content"]);
  save(gateway, "sess_config", "Configured answer.");
  expect(gateway.configs.modelConfig("sess_config")).toEqual({});
  cli.configs.addRejection({ ...rejection, host: "h2", sessionId: "sess_config" });
  await cli.verdicts.clear((verdict) => verdict.host === "h");
  expect(gateway.verdicts.fieldsFor("p", "h", "m")).toEqual(["reasoning_content"]); // same stretch: one read
  await nextRequest();
  expect(gateway.verdicts.fieldsFor("p", "h", "m")).toEqual([]);
  expect(gateway.configs.modelConfig("sess_config")).toEqual({ rejected_carriers: [["p", "h2", "m", ["reasoning_content"]]] });
});

test("any other write through the gateway's own connection empties the cache too", async () => {
  const turn = save(gateway, "sess_own", "Own answer.");
  expect(matchIds(gateway, "Own answer.")).toEqual([turn]);
  expect(await gateway.sessions.remove("sess_own")).toBe(true);
  expect(matchIds(gateway, "Own answer.")).toEqual([]);
});

test("remembered fingerprint matches are bounded per key hash, and the ones in use stay", async () => {
  const { ReplayCache } = await import("../../src/storage/sqlite/replay-cache.js");
  const cache = new ReplayCache(gatewayDb);
  const match = { id: "turn_x", session_id: "sess_x" };
  for (let i = 0; i <= 50_000; i++) {
    cache.rememberMatches("key-a", `fp${i}`, [match]);
    if (i === 0) expect(cache.matchesFor("key-a", "fp-used")).toBeUndefined();
    if (i === 10) cache.rememberMatches("key-a", "fp-used", [match]);
    if (i > 10 && i % 1_000 === 0) expect(cache.matchesFor("key-a", "fp-used")).toEqual([match]); // read now and then: kept
  }
  expect(cache.matchesFor("key-a", "fp0")).toBeUndefined(); // the oldest went
  expect(cache.matchesFor("key-a", "fp50000")).toEqual([match]);
  expect(cache.matchesFor("key-a", "fp-used")).toEqual([match]);
  expect(cache.matchesFor("key-b", "fp50000")).toBeUndefined(); // matches are scoped to their key
  cache.rememberMatches("key-b", "fp1", []);
  expect(cache.matchesFor("key-b", "fp1")).toEqual([]);
});

test("storing a response leaves the replay cache valid; a turn written behind its back still empties it", async () => {
  const { ResponseStore } = await import("../../src/storage/sqlite/response-store.js");
  const db = openDatabase(join(home, "responses.db"), SQLITE_MIGRATIONS);
  try {
    const store = new SqliteStorage(db, undefined);
    const responses = new ResponseStore(db);
    const turn = save(store, "sess_r", "An answer.");
    const record = (id: string) => ({
      id,
      parentId: null,
      sessionId: "sess_r",
      keyHash: "key-a",
      model: "m",
      createdAt: 1,
      conversationId: null,
      messages: [],
      body: { id, object: "response" },
    });
    const cached = store.reads.replaySources(new Map([[turn, turn]])).get(turn);
    responses.save(record("resp_1"), []);
    await nextRequest();
    expect(store.reads.replaySources(new Map([[turn, turn]])).get(turn)).toBe(cached); // from memory, not read again

    db.prepare("UPDATE turns SET reasoning_text = 'edited' WHERE id = ?").run(turn); // a write the cache does not account for
    responses.save(record("resp_2"), []);
    await nextRequest();
    expect(store.reads.replaySources(new Map([[turn, turn]])).get(turn)).toMatchObject({ reasoningText: "edited" });
  } finally {
    db.close();
  }
});

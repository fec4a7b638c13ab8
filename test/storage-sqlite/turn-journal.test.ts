import "reflect-metadata";
import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, expect, onTestFinished, test, vi } from "vitest";
import { fingerprintOf } from "../../src/conversation/fingerprint.js";
import { openDatabase, type Db } from "../../src/storage/sqlite/database.js";
import { SQLITE_MIGRATIONS } from "../../src/storage/sqlite/migrations.js";
import { JOURNAL_BATCH_TURNS, JOURNAL_MAX_WAIT_MS } from "../../src/storage/sqlite/durable-turns.js";
import { SqliteStorage } from "../../src/storage/sqlite/sqlite-storage.js";
import type { NewTurn } from "../../src/storage/turns.js";
import { TurnJournal } from "../../src/storage/sqlite/turn-journal.js";
import { OpenExchanges } from "../../src/providers/upstream/open-exchanges.js";
import { captureLog } from "../support/captured-log.js";
import { waitFor } from "../support/wait-for.js";

const homes: string[] = [];
afterAll(() => homes.forEach((home) => rmSync(home, { recursive: true, force: true })));

/**
 * A gateway's store on a fresh home (or an existing one: a restart), the way build-container opens it: told how many
 * requests are open upstream by the transport's counter (`upstream`, here opened and closed by the test).
 */
function open(home = newHome()) {
  const db = openDatabase(join(home, "state.db"), SQLITE_MIGRATIONS);
  const log = captureLog();
  const journal = new TurnJournal(join(home, "turns.journal"));
  const upstream = new OpenExchanges();
  const store = new SqliteStorage(db, undefined, { journal, log: log.logger, upstreamOpen: () => upstream.count });
  const recovered = store.writes.recoverJournal();
  return { home, db, store, log, recovered, journalFile: journal.file, upstream };
}

/** Saved while another request is open upstream: it does not complete alone. */
function saveBeside({ store, upstream }: { store: SqliteStorage; upstream: OpenExchanges }, next: NewTurn): Promise<void> {
  upstream.opened();
  const saving = store.turns.save(next);
  upstream.closed();
  return saving;
}

/** What a chat request reads right before its upstream call. */
const lookUp = (store: SqliteStorage) =>
  store.turns.lookup({ keyHash: "key", keys: [], provider: "p", host: "h", model: "m", explicit: undefined, withCarriers: false });

function newHome(): string {
  const home = mkdtempSync(join(tmpdir(), "carrierd-journal-"));
  homes.push(home);
  return home;
}

const turn = (id: string, sessionId: string, content: string): NewTurn => ({
  id,
  sessionId,
  keyHash: "key",
  parentTurnId: undefined,
  model: "m",
  plugin: "openai-compatible",
  provider: "p",
  host: "h",
  upstreamModel: "m",
  prompt: [{ role: "user", content: `asking for ${id}` }],
  content,
  toolCalls: [],
  reasoningText: `reasoning ${id}`,
  reasoningDetails: [{ type: "reasoning.text", text: "verbatim", signature: "sig" }],
  nativeRecord: undefined,
  usage: { prompt_tokens: 3 },
  finishReason: "stop",
  upstreamId: "up-1",
  fingerprint: fingerprintOf(content, []),
});

const storedIds = (db: Db) => db.prepare("SELECT id FROM turns ORDER BY seq").pluck().all();
const nextTurnOfTheLoop = () => new Promise((resolve) => setImmediate(resolve));
/** Until the commit that follows a journaled turn by at most JOURNAL_MAX_WAIT_MS has put `id` in state.db. */
const committed = (db: Db, id: string) => waitFor(() => storedIds(db).includes(id), { what: `the commit of ${id}` });
/**
 * Past the time a journaled turn waits for its commit, and past the commit it queues for the end of that turn of the loop
 * (a busy machine runs both timers in one phase): only to show that a commit did NOT happen, which no event can announce.
 */
const pastTheCommitWait = () => new Promise((resolve) => setTimeout(() => setImmediate(resolve), JOURNAL_MAX_WAIT_MS + 5));

test("a turn that completes alone is durable in the journal when its save resolves; one completing beside it joins the commit, due at the end of that turn of the event loop; the journal then empties", async () => {
  const opened = open();
  const { db, store, journalFile } = opened;
  let joinedCommitted = false;
  await store.turns.save(turn("t1", "s1", "a"));
  const joined = saveBeside(opened, turn("t2", "s1", "b")).then(() => (joinedCommitted = true)); // completed while others ran
  const lines = readFileSync(journalFile, "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as { turn: NewTurn });
  expect(lines.map((line) => line.turn)).toEqual([turn("t1", "s1", "a")]); // the one that completed alone
  expect(storedIds(db)).toEqual([]); // the commit has not run yet: only the journal holds t1, and t2 is not answered yet
  expect(joinedCommitted).toBe(false);
  await joined;
  expect(storedIds(db)).toEqual(["t1", "t2"]);
  expect((await store.sessions.show("s1"))?.turnList.map((stored) => [stored.position, stored.reasoningText, stored.reasoningDetails])).toEqual([
    [1, "reasoning t1", [{ type: "reasoning.text", text: "verbatim", signature: "sig" }]],
    [2, "reasoning t2", [{ type: "reasoning.text", text: "verbatim", signature: "sig" }]],
  ]);
  await nextTurnOfTheLoop();
  expect(statSync(journalFile).size).toBe(0);
  store.writes.close();
  db.close();
});

test("turns journaled by a process that ended before their commit are committed at the next start, with the time they were answered", async () => {
  const first = open();
  await first.store.turns.save(turn("t1", "s1", "a"));
  await committed(first.db, "t1");
  await first.store.turns.save(turn("t2", "s2", "b"));
  const answeredBy = Date.now();
  // the process ends here, before the commit: its connection goes first, so nothing more reaches state.db
  first.db.close();
  first.store.writes.close();
  await pastTheCommitWait();
  expect(new Database(join(first.home, "state.db")).prepare("SELECT id FROM turns").pluck().all()).toEqual(["t1"]);

  const restarted = open(first.home);
  expect(restarted.recovered).toBe(1);
  expect(storedIds(restarted.db)).toEqual(["t1", "t2"]);
  const stored = (await restarted.store.sessions.show("s2"))!.turnList[0]!;
  expect([stored.content, stored.reasoningText, stored.upstreamId]).toEqual(["b", "reasoning t2", "up-1"]);
  expect(Date.parse(stored.createdAt)).toBeLessThanOrEqual(answeredBy);
  expect(restarted.store.reads.matchesFor("key", [fingerprintOf("b", [])]).get(fingerprintOf("b", []))).toEqual([
    { id: "t2", session_id: "s2", parent_turn_id: null },
  ]);
  expect(statSync(restarted.journalFile).size).toBe(0);
  expect(restarted.log.lines.some((line) => line.level === "info" && line.message === "turns recovered from the journal")).toBe(true);
  restarted.store.writes.close();
  restarted.db.close();
});

test("recovery skips turns already stored and a last line cut short, and keeps a copy of a journal it cannot commit", async () => {
  const { home, db, store, journalFile } = open();
  await store.turns.save(turn("t1", "s1", "a"));
  await committed(db, "t1");
  store.writes.close();
  db.close();
  // as if the process had ended between the commit and emptying the journal, and the machine mid-write
  appendFileSync(
    journalFile,
    `${JSON.stringify({ at: Date.now(), turn: turn("t1", "s1", "a") })}\n${JSON.stringify({ at: Date.now(), turn: turn("t2", "s1", "b") })}\n{"at":17,"turn":{"id":"t3","sess`,
  );
  const restarted = open(home);
  expect(restarted.recovered).toBe(1);
  expect(storedIds(restarted.db)).toEqual(["t1", "t2"]);
  expect(restarted.log.lines.filter((line) => line.level === "warn").map((line) => line.object.lines)).toEqual([1]);
  restarted.store.writes.close();
  restarted.db.close();

  // a turn SQLite refuses (no session id: NOT NULL): the gateway still starts, and the journal is kept beside it
  appendFileSync(journalFile, `${JSON.stringify({ at: Date.now(), turn: { ...turn("t4", "s1", "c"), sessionId: null } })}\n`);
  const again = open(home);
  expect(again.recovered).toBe(0);
  const copies = readdirSync(home).filter((name) => name.startsWith("turns.journal.unrecovered-"));
  expect(copies).toHaveLength(1);
  expect(readFileSync(join(home, copies[0]!), "utf8")).toContain('"id":"t4"');
  expect(again.log.lines.some((line) => line.level === "error")).toBe(true);
  expect(statSync(again.journalFile).size).toBe(0);
  again.store.writes.close();
  again.db.close();
});

test("a commit that fails (another connection holds the write lock) is retried; the turn stays in the journal until it lands", async () => {
  const { home, db, store, log, journalFile } = open();
  db.pragma("busy_timeout = 0");
  const other = new Database(join(home, "state.db"));
  other.exec("BEGIN IMMEDIATE");
  await store.turns.save(turn("t1", "s1", "a"));
  await waitFor(() => log.lines.some((line) => line.level === "error"), { what: "the failed commit's error line" });
  expect(log.lines.filter((line) => line.level === "error").map((line) => line.message)).toEqual([
    "a journaled turn could not be committed to state.db; retrying in a second",
  ]);
  expect(readFileSync(journalFile, "utf8")).toContain('"id":"t1"');
  other.exec("ROLLBACK");
  other.close();
  await waitFor(() => storedIds(db).length > 0, { timeoutMs: 3000, intervalMs: 50, what: "the retried commit" });
  expect(storedIds(db)).toEqual(["t1"]);
  expect(statSync(journalFile).size).toBe(0);
  store.writes.close();
  db.close();
});

test("CLI stores have no journal: a turn is durable at its commit", async () => {
  const home = newHome();
  const db = openDatabase(join(home, "state.db"), SQLITE_MIGRATIONS);
  const store = new SqliteStorage(db, undefined);
  await store.turns.save(turn("t1", "s1", "a"));
  expect(storedIds(db)).toEqual(["t1"]);
  expect(store.writes.recoverJournal()).toBe(0);
  expect(existsSync(join(home, "turns.journal"))).toBe(false);
  db.close();
});

test("journaled turns are committed together once a batch waits and the next request looks up what it sends upstream (commitWaitingBatch), else after JOURNAL_MAX_WAIT_MS", async () => {
  const { db, store, journalFile } = open();
  // the journal's JOURNAL_MAX_WAIT_MS passes when the test says so: on a busy machine the loop below can take longer than that
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
  onTestFinished(() => void vi.useRealTimers());
  const ids = Array.from({ length: JOURNAL_BATCH_TURNS }, (_, i) => `t${i + 1}`);
  for (const id of ids.slice(0, -1)) {
    await store.turns.save(turn(id, "s1", id));
    await lookUp(store); // a request's upstream call follows its lookup
    await nextTurnOfTheLoop();
  }
  expect(storedIds(db)).toEqual([]); // not a batch yet: every turn so far is durable in the journal only
  await store.turns.save(turn(ids.at(-1)!, "s1", ids.at(-1)!));
  await lookUp(store);
  expect(storedIds(db)).toEqual([]); // queued for the commit at the end of this turn of the loop
  await nextTurnOfTheLoop();
  expect(storedIds(db)).toEqual(ids);
  expect(statSync(journalFile).size).toBe(0);

  await store.turns.save(turn("late", "s1", "late")); // no batch gathers after it
  await lookUp(store);
  await nextTurnOfTheLoop();
  expect(storedIds(db)).toEqual(ids);
  vi.advanceTimersByTime(JOURNAL_MAX_WAIT_MS); // then it is committed at the end of that turn of the loop
  await nextTurnOfTheLoop();
  expect(storedIds(db)).toEqual([...ids, "late"]);
  expect(statSync(journalFile).size).toBe(0);
  store.writes.close();
  db.close();
});

test("a turn that completes while another request is open upstream is not journaled: it joins the group commit and resolves once committed", async () => {
  const opened = open();
  const { db, store, journalFile } = opened;
  let committed = false;
  const saving = saveBeside(opened, turn("t1", "s1", "a")).then(() => (committed = true));
  expect(statSync(journalFile).size).toBe(0);
  await Promise.resolve();
  expect(committed).toBe(false);
  await saving;
  expect(storedIds(db)).toEqual(["t1"]);
  store.writes.close();
  db.close();
});

test("a journaled turn waiting for its commit is already the newest match of its fingerprint, and its carriers are replayed from memory", async () => {
  const { db, store } = open();
  const same = fingerprintOf("It is 20 C.", []);
  await store.turns.save(turn("t1", "s1", "It is 20 C."));
  await committed(db, "t1");
  expect(store.reads.matchesFor("key", [same]).get(same)).toEqual([{ id: "t1", session_id: "s1", parent_turn_id: null }]); // now known in memory
  await store.turns.save(turn("t2", "s2", "It is 20 C."));
  expect(store.reads.matchesFor("key", [same]).get(same)).toEqual([
    { id: "t2", session_id: "s2", parent_turn_id: null },
    { id: "t1", session_id: "s1", parent_turn_id: null },
  ]);
  const journaled = store.reads.replaySources(new Map([[0, "t2"]])).get(0);
  expect(journaled?.reasoningText).toBe("reasoning t2");
  expect(storedIds(db)).toEqual(["t1"]); // answered from memory: the commit still waits
  await committed(db, "t2");
  expect(store.reads.matchesFor("key", [same]).get(same)).toEqual([
    { id: "t2", session_id: "s2", parent_turn_id: null },
    { id: "t1", session_id: "s1", parent_turn_id: null },
  ]); // not twice
  expect(storedIds(db)).toEqual(["t1", "t2"]);
  expect(store.reads.replaySources(new Map([[0, "t2"]])).get(0)).toBe(journaled); // the commit kept what journaling remembered: no second copy
  store.writes.close();
  db.close();
});

test("the connection reads as if a journaled turn were committed: a session removed or patched right after its turn stays so", async () => {
  const { db, store } = open();
  await store.turns.save(turn("t1", "scratch", "a"));
  expect(await store.sessions.remove("scratch")).toBe(true); // the turn was committed first, then removed with its session
  await store.turns.save(turn("t2", "s2", "b"));
  store.configs.addRejection({
    provider: "p",
    host: "h",
    model: "m",
    fields: ["reasoning_content"],
    status: 400,
    message: "no",
    sessionId: "s2",
    keyHash: "key",
    clientModel: "m",
  });
  await nextTurnOfTheLoop();
  expect(storedIds(db)).toEqual(["t2"]);
  expect(db.prepare("SELECT id FROM sessions ORDER BY id").pluck().all()).toEqual(["s2"]);
  expect(store.configs.modelConfig("s2").rejected_carriers).toEqual([["p", "h", "m", ["reasoning_content"]]]);
  store.writes.close();
  db.close();
});

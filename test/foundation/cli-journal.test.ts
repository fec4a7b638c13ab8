import "reflect-metadata";
import { mkdtempSync, rmSync, statSync, truncateSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { fingerprintOf } from "../../src/conversation/fingerprint.js";
import { openDatabase } from "../../src/storage/sqlite/database.js";
import { SQLITE_MIGRATIONS } from "../../src/storage/sqlite/migrations.js";
import { SqliteStorage } from "../../src/storage/sqlite/sqlite-storage.js";
import type { NewTurn } from "../../src/storage/turns.js";
import { JOURNAL_FILE, TurnJournal } from "../../src/storage/sqlite/turn-journal.js";
import { waitFor } from "../support/wait-for.js";
import { carrierd, cleanEnv } from "./cli-process.js";

const homes: string[] = [];
afterAll(() => homes.forEach((home) => rmSync(home, { recursive: true, force: true })));

const turn = (id: string, sessionId: string): NewTurn => ({
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
  content: `answer ${id}`,
  toolCalls: [],
  reasoningText: `reasoning ${id}`,
  reasoningDetails: undefined,
  nativeRecord: undefined,
  usage: undefined,
  finishReason: "stop",
  upstreamId: undefined,
  fingerprint: fingerprintOf(`answer ${id}`, []),
});

/** A home where session s1 has turn 1 in state.db and turn 2 only in the journal: a gateway answered it and stopped (or has not committed it yet). */
function homeWithJournaledTurn(): { home: string; journal: string } {
  const home = mkdtempSync(join(tmpdir(), "carrierd-cli-journal-"));
  homes.push(home);
  const db = openDatabase(join(home, "state.db"), SQLITE_MIGRATIONS);
  new SqliteStorage(db, undefined).writes.saveNow(turn("t1", "s1"));
  db.close();
  const journal = new TurnJournal(join(home, JOURNAL_FILE));
  journal.append(turn("t2", "s1"));
  journal.close();
  return { home, journal: join(home, JOURNAL_FILE) };
}

const sessionsCli = (home: string, ...args: string[]) => carrierd(["sessions", ...args, "--home", home], { env: cleanEnv() });

test("sessions rm and branch refuse a session with a turn still in the gateway's journal: it would come back at the commit, or be missing from the branch", async () => {
  const { home } = homeWithJournaledTurn();
  const removed = await sessionsCli(home, "rm", "s1");
  expect(removed.code).toBe(1);
  expect(removed.stderr).toMatch(/session s1 has a turn the gateway has not committed to state\.db yet/);
  const branched = await sessionsCli(home, "branch", "s1");
  expect(branched.code).toBe(1);
  expect((await sessionsCli(home, "show", "s1")).code).toBe(0); // nothing was removed
  // another session is not held up
  expect((await sessionsCli(home, "rm", "s2")).stderr).toMatch(/no session s2/);
}, 60_000); // four CLI processes one after another, two of them waiting out the CLI's 2 s for the journal: past 20 s on a loaded 2-core machine

test("sessions rm waits for the gateway to commit the journaled turn, then removes the session", async () => {
  const { home, journal } = homeWithJournaledTurn();
  // reading the journal updates its access time: set in the past (with its modification time, so that a relatime mount updates it)
  const past = new Date(Date.now() - 60_000);
  utimesSync(journal, past, past);
  const removing = sessionsCli(home, "rm", "s1");
  // once the CLI has read the journal and found the turn, the gateway's commit empties it; a noatime mount shows no read:
  // then 1.5 s, still within the 2 s the CLI waits from its start
  await waitFor(() => statSync(journal).atimeMs > past.getTime(), { timeoutMs: 1500, what: "the CLI reading the journal" }).catch(() => undefined);
  truncateSync(journal, 0);
  const removed = await removing;
  expect(removed.stdout).toContain("removed s1");
  expect(removed.code).toBe(0);
});

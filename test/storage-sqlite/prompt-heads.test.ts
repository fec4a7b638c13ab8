import "reflect-metadata";
import { expect, test } from "vitest";
import type { ChatMessage } from "../../src/providers/contract.js";
import { PROMPT_HEAD_MIN_CHARS } from "../../src/storage/prompt-heads.js";
import { openDatabase } from "../../src/storage/sqlite/database.js";
import { SQLITE_MIGRATIONS } from "../../src/storage/sqlite/migrations.js";
import { SqliteStorage } from "../../src/storage/sqlite/sqlite-storage.js";
import { newTurn } from "../storage/contract.js";

// prompt heads stored once (src/storage/prompt-heads.ts): what state.db holds, which the storage contract cannot see
const SYSTEM: ChatMessage = { role: "system", content: `You are a coding agent. ${"Follow the rules. ".repeat(PROMPT_HEAD_MIN_CHARS / 16)}` };

test("sessions sending the same long system prompt share one row of it; it goes with the last session that names it", async () => {
  const db = openDatabase(":memory:", SQLITE_MIGRATIONS);
  const store = new SqliteStorage(db, undefined);
  const asked = (sessionId: string, words: string) => newTurn(sessionId, words, { prompt: [SYSTEM, { role: "user", content: words }] });
  store.writes.saveNow(asked("sess_a", "first task"));
  store.writes.saveNow(asked("sess_b", "second task"));
  store.writes.saveNow(
    newTurn("sess_c", "short", {
      prompt: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "hi" },
      ],
    }),
  );
  const heads = () => db.prepare("SELECT hash, length(text) AS chars FROM prompt_heads").all() as { hash: string; chars: number }[];
  expect(heads()).toEqual([{ hash: expect.stringMatching(/^[0-9a-f]{64}$/), chars: JSON.stringify([SYSTEM]).length }]);
  // each turn's own row keeps the user's message alone, and names the head; a short system prompt stays in its row
  const rows = db.prepare("SELECT session_id, prompt, prompt_head FROM turns ORDER BY seq").all();
  expect(rows).toEqual([
    { session_id: "sess_a", prompt: JSON.stringify([{ role: "user", content: "first task" }]), prompt_head: heads()[0]!.hash },
    { session_id: "sess_b", prompt: JSON.stringify([{ role: "user", content: "second task" }]), prompt_head: heads()[0]!.hash },
    {
      session_id: "sess_c",
      prompt: JSON.stringify([
        { role: "system", content: "Be brief." },
        { role: "user", content: "hi" },
      ]),
      prompt_head: null,
    },
  ]);
  expect(await store.sessions.remove("sess_a")).toBe(true);
  expect(heads()).toHaveLength(1);
  expect(await store.sessions.remove("sess_b")).toBe(true);
  expect(heads()).toEqual([]);
  // sent again, it is stored again
  store.writes.saveNow(asked("sess_d", "third task"));
  expect(JSON.stringify((await store.sessions.show("sess_d"))!.prompts)).toBe(JSON.stringify([[SYSTEM, { role: "user", content: "third task" }]]));
  await store.close();
});

test("a head equal to a recent one reuses its JSON; one that differs only in its keys' order is another head, read back as it was", async () => {
  const db = openDatabase(":memory:", SQLITE_MIGRATIONS);
  const store = new SqliteStorage(db, undefined);
  const reordered = { content: SYSTEM.content, role: "system" } as ChatMessage;
  const changed: ChatMessage = { role: "system", content: `${SYSTEM.content}!` };
  const prompts: ChatMessage[][] = [
    [{ ...SYSTEM }, { role: "user", content: "one" }],
    [{ ...SYSTEM }, { role: "user", content: "two" }],
    [reordered, { role: "user", content: "three" }],
    [changed, { role: "user", content: "four" }],
    [
      { ...SYSTEM, name: "agent" },
      { role: "user", content: "five" },
    ],
  ];
  prompts.forEach((prompt, index) => store.writes.saveNow(newTurn(`sess_${index}`, `answer ${index}`, { prompt })));
  expect(db.prepare("SELECT COUNT(*) FROM prompt_heads").pluck().get()).toBe(4);
  for (const [index, prompt] of prompts.entries()) {
    expect(JSON.stringify((await store.sessions.show(`sess_${index}`))!.prompts)).toBe(JSON.stringify([prompt]));
  }
  await store.close();
});

import "reflect-metadata";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { COMPACTION_MIGRATIONS } from "../../src/storage/sqlite/compaction-migrations.js";
import { KEY_MIGRATIONS } from "../../src/storage/sqlite/key-migrations.js";
import { RESPONSES_MIGRATIONS } from "../../src/storage/sqlite/responses-migrations.js";
import { findSession } from "../../src/turn/sessions/session-finder.js";
import { openDatabase } from "../../src/storage/sqlite/database.js";
import { ENVELOPE_KEY_MIGRATIONS } from "../../src/storage/sqlite/envelope-key-migrations.js";
import { SESSION_MIGRATIONS } from "../../src/storage/sqlite/session-migrations.js";
import { PROMPT_HEAD_MIGRATIONS } from "../../src/storage/sqlite/prompt-head-migrations.js";
import { SESSION_HISTORY_MIGRATIONS } from "../../src/storage/sqlite/history-migrations.js";
import { SqliteStorage } from "../../src/storage/sqlite/sqlite-storage.js";
import type { DepthAsked } from "../../src/storage/turns.js";

// Migration 4: turns stored with the fingerprint of the release before it are found by what frontends send now.
const home = mkdtempSync(join(tmpdir(), "carrierd-migration-4-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));

/** The fingerprint as the release before migration 4 computed it: trailing whitespace only, "" arguments as "", calls in their order. */
function oldFingerprint(content: string, calls: [string, string, string][]): string {
  const canonical = calls.map(([id, name, args]) => [id, name, args.trim() === "" ? "" : JSON.stringify(JSON.parse(args))]);
  return createHash("sha256")
    .update(JSON.stringify([content.trimEnd(), canonical]))
    .digest("base64url")
    .slice(0, 32);
}

test("old fingerprints are recomputed: a tool-call turn and an answer stored before migration 4 replay for an Open WebUI / LibreChat history", async () => {
  const file = join(home, "v3.db");
  const old = openDatabase(file, [...SESSION_MIGRATIONS.filter((migration) => migration.version < 4), ...RESPONSES_MIGRATIONS, ...COMPACTION_MIGRATIONS]);
  const now = new Date().toISOString();
  old
    .prepare(`INSERT INTO sessions (id, key_hash, model, parent_id, model_config, created_at, updated_at) VALUES ('sess_old', 'k', 'm', NULL, '{}', ?, ?)`)
    .run(now, now);
  const insert = old.prepare(
    `INSERT INTO turns (id, session_id, position, parent_turn_id, model, plugin, provider, host, upstream_model, prompt, content, tool_calls, reasoning_text, created_at, key_hash, fingerprint)
     VALUES (?, 'sess_old', ?, ?, 'm', 'openai-compatible', 'p', 'h', 'm', '[]', ?, ?, ?, ?, 'k', ?)`,
  );
  const calls = [{ id: "call_00_Q7vLx2Rt9KmWp4Zs", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }];
  insert.run(
    "turn_1",
    1,
    null,
    "Hello **world**.",
    JSON.stringify(calls),
    "R1",
    now,
    oldFingerprint("Hello **world**.", [["call_00_Q7vLx2Rt9KmWp4Zs", "get_weather", '{"city":"Paris"}']]),
  );
  insert.run("turn_2", 2, "turn_1", "It is sunny.", null, "R2", now, oldFingerprint("It is sunny.", []));
  old.close();

  const db = openDatabase(file, [
    ...SESSION_MIGRATIONS,
    ...RESPONSES_MIGRATIONS,
    ...COMPACTION_MIGRATIONS,
    ...KEY_MIGRATIONS,
    ...ENVELOPE_KEY_MIGRATIONS,
    ...SESSION_HISTORY_MIGRATIONS,
    ...PROMPT_HEAD_MIGRATIONS,
  ]);
  const store = new SqliteStorage(db, undefined);
  const resent = [
    { role: "user" as const, content: "weather?" },
    // LibreChat: the tool-call turn's text blanked; Open WebUI 0.6: a leading newline
    { role: "assistant" as const, content: "", tool_calls: [{ ...calls[0]!, function: { name: "get_weather", arguments: '{"city": "Paris"}' } }] as never },
    { role: "tool" as const, tool_call_id: "call_00_Q7vLx2Rt9KmWp4Zs", content: "Sunny" },
    { role: "assistant" as const, content: "\nIt is sunny." },
    { role: "user" as const, content: "thanks" },
  ];
  const reads = {
    matchesFor: async (keyHash: string, keys: readonly string[]) => store.reads.matchesFor(keyHash, keys),
    turnsAtDepths: async (keyHash: string, sessionId: string, asked: readonly DepthAsked[]) => store.reads.turnsAtDepths(keyHash, sessionId, asked),
  };
  const found = await findSession(reads, "k", resent, undefined);
  expect(found.sessionId).toBe("sess_old");
  expect([...found.turnIds.entries()]).toEqual([
    [1, "turn_1"],
    [3, "turn_2"],
  ]);
  expect(db.prepare("SELECT call_key IS NOT NULL FROM turns ORDER BY position").pluck().all()).toEqual([1, 0]);
  db.close();
});

// What reading session history costs on a SQLite store of SESSIONS sessions × TURNS turns
// (docs/performance.md#session-history): a page of GET /v1/sessions, filtered and searched, and one session,
// through the storage port the endpoints use. The store is filled by plain INSERTs, one key in ten another's.
//   npx tsc -p tsconfig.json && node bench/session-history.mjs 20000 5

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
const { openDatabase } = await import("../dist/src/storage/sqlite/database.js");
const { SQLITE_MIGRATIONS } = await import("../dist/src/storage/sqlite/migrations.js");
const { SqliteStorage } = await import("../dist/src/storage/sqlite/sqlite-storage.js");
const sessions = Number(process.argv[2] ?? 20000);
const turns = Number(process.argv[3] ?? 5);
const dir = mkdtempSync(join(tmpdir(), "hist-bench-"));
const db = openDatabase(join(dir, "state.db"), SQLITE_MIGRATIONS);
const insS = db.prepare("INSERT INTO sessions (id, key_hash, model, parent_id, model_config, created_at, updated_at) VALUES (?, ?, 'm', NULL, '{}', ?, ?)");
const insT =
  db.prepare(`INSERT INTO turns (id, session_id, position, model, plugin, provider, host, upstream_model, prompt, content, reasoning_text, created_at, key_hash, fingerprint, depth, audit)
  VALUES (?, ?, ?, ?, 'p', ?, 'h', 'um', ?, ?, ?, ?, ?, ?, ?, ?)`);
const base = Date.parse("2026-01-01T00:00:00Z");
db.transaction(() => {
  for (let s = 0; s < sessions; s++) {
    const at = new Date(base + s * 1000).toISOString();
    insS.run(`sess_${s}`, s % 10 === 0 ? "k1" : "k0", at, at);
    for (let t = 1; t <= turns; t++) {
      const prompt = JSON.stringify([{ role: "user", content: `question ${s}.${t} about topic ${s % 97} and some more words to make it realistic` }]);
      insT.run(
        `turn_${s}_${t}`,
        `sess_${s}`,
        t,
        s % 3 ? "model-a" : "model-b",
        s % 2 ? "deepseek" : "openrouter",
        prompt,
        `answer ${s}.${t} `.repeat(20),
        "reasoning ".repeat(50),
        new Date(base + s * 1000 + t).toISOString(),
        "k0",
        `fp${s}.${t}`,
        t,
        '{"route":1}',
      );
    }
  }
})();
const store = new SqliteStorage(db, undefined);
const time = async (label, query, runs = 5) => {
  const samples = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await store.sessions.list(query);
    samples.push(performance.now() - t0);
  }
  samples.sort((a, b) => a - b);
  console.log(`${label}: median ${samples[Math.floor(runs / 2)].toFixed(1)} ms`);
};
await time("first page (20)", { keyHash: undefined, limit: 21, after: undefined });
await time("first page, one key's", { keyHash: "k1", limit: 21, after: undefined });
await time("provider filter", { keyHash: undefined, limit: 21, after: undefined, provider: "deepseek" });
await time("q search (rare text)", { keyHash: undefined, limit: 21, after: undefined, text: "question 19999.3 " }, 3);
const t0 = performance.now();
await store.sessions.show("sess_100");
console.log(`one session (${turns} turns): ${(performance.now() - t0).toFixed(2)} ms`);
await store.close();
rmSync(dir, { recursive: true, force: true });

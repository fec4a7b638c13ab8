import { fingerprintOf } from "../../src/conversation/fingerprint.js";
import type { Storage } from "../../src/storage/storage.js";
import { newTurn } from "./contract.js";

/**
 * A store as a long-running gateway leaves it, made in the database itself in
 * seconds: TURNS turns over SESSIONS sessions of KEYS keys. Turn i is turn
 * (i / SESSIONS + 1) of session `sess_{i % SESSIONS}`, filed under
 * `key_{i % KEYS}` (its session's key); every fifth turn of a key shares one
 * fingerprint (a greeting stored thousands of times), every tenth has a call
 * key, every thirteenth after the first round was stored by a second
 * conversation of its session (depth 1 at a later position). Each session
 * has a response (chained a hundred back), an output item; a tenth of them a
 * compaction checkpoint, a tenth a named conversation.
 */
export const FILL = { turns: 200_000, sessions: 10_000, keys: 100 } as const;

/** The fill's statements for `i` running over a row source (a recursive CTE in SQLite, generate_series in PostgreSQL). */
export function fillStatements(rows: (count: number) => { with: string; from: string }, options: { postgres: boolean }): string[] {
  const { turns, sessions, keys } = FILL;
  const insert = (count: number, head: string, select: string) => {
    const source = rows(count);
    return `${source.with} INSERT INTO ${head} SELECT ${select} FROM ${source.from}`;
  };
  const position = `(i / ${sessions} + 1)`;
  return [
    insert(
      sessions,
      `sessions (id, key_hash, model, parent_id, model_config, created_at, updated_at${options.postgres ? ", last_position" : ""})`,
      `'sess_' || i, 'key_' || (i % ${keys}), 'm', NULL,
       CASE WHEN i % 7 = 0 THEN '{"rejected_carriers":[["prov","h","m",["reasoning"]]]}' ELSE '{}' END, '2026-12-01', '2026-12-01'${options.postgres ? `, ${turns / sessions}` : ""}`,
    ),
    insert(
      turns,
      `turns (seq, id, session_id, position, depth, parent_turn_id, model, plugin, provider, host, upstream_model, prompt, content, reasoning_text,
              created_at, key_hash, fingerprint, call_key, active)`,
      `i + 1, 'turn_' || i, 'sess_' || (i % ${sessions}), ${position},
       CASE WHEN i % 13 = 0 AND i >= ${sessions} THEN 1 ELSE ${position} END,
       CASE WHEN i >= ${sessions} THEN 'turn_' || (i - ${sessions}) END, 'm', 'openai-compatible', 'prov', 'h', 'm', '[]', 'answer ' || i,
       'thinking ' || i, '2026-12-01', 'key_' || (i % ${keys}),
       CASE WHEN i % 5 = 0 THEN 'fp_common_' || (i % ${keys}) ELSE 'fp_' || i END, CASE WHEN i % 10 = 1 THEN 'ids:' || i END, 1`,
    ),
    insert(
      sessions,
      `responses (id, parent_id, session_id, key_hash, model, created_at, conversation_id, messages, body, input_items)`,
      `'resp_' || i, CASE WHEN i >= 100 THEN 'resp_' || (i - 100) END, 'sess_' || i, 'key_' || (i % ${keys}), 'm', 0, NULL,
       '[{"role":"user","content":"hi"}]', '{"object":"response"}', '[]'`,
    ),
    insert(sessions, `response_items (id, response_id, item)`, `'item_' || i, 'resp_' || i, '{"type":"message"}'`),
    insert(
      sessions / 10,
      `response_conversations (id, session_id, last_response_id, created_at, updated_at, key_hash)`,
      `'conv_' || (i * 10), 'sess_' || (i * 10), 'resp_' || (i * 10), 0, 0, 'key_' || (i * 10 % ${keys})`,
    ),
    insert(
      sessions / 10,
      `compaction_checkpoints (id, session_id, anchor_response_id, head_count, cut_index, summary, summarizer, summarized_messages, archived_turns,
                               archived_through, tokens_before, tokens_after, created_at)`,
      `'ckpt_' || i, 'sess_' || (i * 10), 'resp_' || (i * 10), 1, 2, 'summary', 'm', 2, 1, 1, 100, 40, '2026-12-01'`,
    ),
    `INSERT INTO verdicts (provider, host, model, field, status, message, recorded_at) VALUES ('prov', 'h', 'm', 'reasoning', 400, 'no', '2026-12-01')`,
  ];
}

/** SQLite's row source: a recursive CTE counting 0…count-1. */
export const sqliteRows = (count: number) => ({ with: `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${count - 1})`, from: "n" });

/** PostgreSQL's row source. */
export const postgresRows = (count: number) => ({ with: "", from: `generate_series(0, ${count - 1}) AS n(i)` });

/**
 * Every storage operation a request runs, once each, against the fill: the
 * request's lookup (matches, verdicts, configs, carriers), the turns at
 * depths, the carriers of older matches, a rejection's verdicts and
 * session config, the turn's insert into an existing and a new session,
 * the Responses API's reads and write, and compaction's. Session `sess_105`
 * is key_5's: its turns are i = 105 + 10,000 k. What it writes is named
 * with `tag`, so it runs again on the same store.
 */
export async function exerciseRequestPath(store: Storage, tag: string): Promise<void> {
  const key = "key_5";
  const session = "sess_105";
  await store.turns.lookup({
    keyHash: key,
    keys: ["fp_common_5", "fp_10105", "ids:10101", fingerprintOf("never stored", [])],
    provider: "prov",
    host: "h",
    model: "m",
    explicit: session,
    withCarriers: true,
  });
  await store.turns.replaySources(
    new Map([
      [0, "turn_105"],
      [1, "turn_20105"],
    ]),
  );
  await store.turns.turnsAtDepths(key, session, [
    { depth: 1, prompt: "[]" },
    { depth: 2, prompt: '[{"role":"user","content":"go on"}]' },
    { depth: 3, prompt: "[]" },
  ]);
  const rejection = { provider: "prov", host: "h", model: "m", fields: ["reasoning"], status: 400, message: "no", keyHash: key, clientModel: "m" };
  await store.verdicts.record({ ...rejection, sessionId: session });
  await store.verdicts.record({ ...rejection, sessionId: `sess_new_1_${tag}` });
  await store.turns.save(newTurn(session, "a new answer", { id: `turn_path_1_${tag}`, keyHash: key, depth: 21 }));
  await store.turns.save(newTurn(`sess_fresh_${tag}`, "a first answer", { id: `turn_path_2_${tag}`, keyHash: key, depth: 1 }));
  await store.committed();

  await store.responses.get("resp_105");
  await store.responses.get("resp_105", "inputItems");
  await store.responses.get("resp_9905", "history");
  await store.responses.item("item_105");
  await store.responses.conversation("conv_100");
  await store.responses.conversation("conv_9900", "history");
  await store.responses.save(
    {
      id: `resp_path_1_${tag}`,
      parentId: "resp_100",
      sessionId: "sess_100",
      keyHash: "key_0",
      model: "m",
      createdAt: 1,
      conversationId: "conv_100",
      messages: [{ role: "user", content: "next" }],
      body: { object: "response" },
      inputItems: [],
    },
    [{ id: `item_path_1_${tag}`, type: "message" }],
  );

  const anchored = "sess_1050";
  const current = await store.checkpoints.inForce(anchored, "resp_1050");
  await store.sessions.show(anchored); // sessions show: its turns and compaction
  await store.checkpoints.inForce("sess_105", "resp_9905"); // a session without checkpoints: the chain is not walked
  if (current) {
    await store.checkpoints.save(
      {
        id: `ckpt_path_1_${tag}`,
        sessionId: anchored,
        anchorResponseId: "resp_1050",
        headCount: 1,
        cutIndex: 3,
        summary: "again",
        summarizer: "m",
        summarizedMessages: 2,
        tokensBefore: 100,
        tokensAfter: 30,
      },
      { turnIds: ["turn_11050"], supersedes: current, owner: { keyHash: "key_0", model: "m" } },
    );
  }
}

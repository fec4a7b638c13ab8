// A store pre-filled with stored turns, for measuring what a request costs
// on a big store (`PREFILL_TURNS` in quick.mjs, `BENCH_PREFILL_TURNS` in
// run.mjs, `PREFILL_TURNS` in soak.mjs; docs/performance.md, "Pre-filled
// store").
//
// The gateway stores one real conversation first (TEMPLATE_TURNS turns, under
// the bench's key, through the gateway's own write path), is stopped, and
// that conversation is then copied in the database, in large INSERT … SELECT
// statements, until the store holds `turns` more: every column is copied as
// the gateway wrote it, except the ones that make a copy a turn of its own
// (ids, session, fingerprint, call key) and the key it is filed under. So the
// copies follow the schema whatever columns it has, and 1,000,000 turns take
// about a minute (SQLite) on the bench machine. One copy in `keys` is filed
// under the bench's own key (its lookups meet them), the others under
// `keys - 1` other keys.
import Database from "better-sqlite3";
import { join } from "node:path";
import pg from "pg";
import { KEY, startCarrierd } from "./gateway.mjs";
import { stop } from "./processes.mjs";

const TEMPLATE = "prefill-template";
const TEMPLATE_TURNS = 10;
/** Sessions copied per statement (× the template's turns). */
const SESSIONS_PER_BATCH = 5_000;

/**
 * Starts carrierd (as startCarrierd does) on a store that already holds
 * `turns` stored turns besides its template conversation. `env` chooses the
 * store (CARRIERD_STORE for PostgreSQL); `analyze` runs ANALYZE after the
 * fill (left out, the planner has whatever statistics it gathered itself).
 */
export async function startPrefilledCarrierd(upstreamPort, dir, { turns, keys = 100, env = {}, analyze = false, templateTurns = TEMPLATE_TURNS, ...options }) {
  if (!turns) return startCarrierd(upstreamPort, dir, { env, ...options });
  const first = await startCarrierd(upstreamPort, dir, { env, ...options });
  try {
    await storeTemplate(first.port, templateTurns);
  } finally {
    await stop(first);
  }
  const started = performance.now();
  const sessions = Math.ceil(turns / templateTurns);
  if (env.CARRIERD_STORE) await fillPostgres(env.CARRIERD_STORE, sessions, keys, analyze);
  else fillSqlite(join(first.home, "state.db"), sessions, keys, analyze);
  console.log(
    `pre-filled the store with ${(sessions * templateTurns).toLocaleString("en")} turns in ${sessions.toLocaleString("en")} sessions over ${keys} keys in ${((performance.now() - started) / 1000).toFixed(1)} s${analyze ? ", then ANALYZE" : ""}`,
  );
  return startCarrierd(upstreamPort, dir, { env, ...options });
}

/** One conversation of `turns` turns through the gateway's write path: the rows every copy is made from. */
async function storeTemplate(port, turns) {
  const messages = [];
  for (let turn = 0; turn < turns; turn++) {
    messages.push({ role: "user", content: `template question ${turn}` });
    const response = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", "x-session-id": TEMPLATE },
      body: JSON.stringify({ model: "bench", messages }),
    });
    if (response.status !== 200) throw new Error(`pre-fill: the template turn was answered ${response.status}: ${await response.text()}`);
    messages.push({ role: "assistant", content: (await response.json()).choices[0].message.content });
  }
}

/**
 * The select list copying `table`'s template rows for series value `n`:
 * `copied` columns get the copy's suffix, `key_hash` the copy's key,
 * generated columns (an INTEGER PRIMARY KEY, a serial) are left out.
 */
function copyColumns(columns, copied, keyOf) {
  const names = [];
  const values = [];
  for (const { name, generated } of columns) {
    if (generated) continue;
    names.push(name);
    if (name === "key_hash") values.push(keyOf);
    else if (copied.includes(name)) values.push(`CASE WHEN t.${name} IS NULL THEN NULL ELSE t.${name} || '-' || s.n END`);
    else values.push(`t.${name}`);
  }
  return { names: names.join(", "), values: values.join(", ") };
}

const SESSION_COPIED = ["id", "parent_id"];
const TURN_COPIED = ["id", "session_id", "parent_turn_id", "fingerprint", "call_key"];

function fillSqlite(file, sessions, keys, analyze) {
  const db = new Database(file);
  try {
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = OFF");
    const columnsOf = (table) =>
      db
        .prepare("SELECT name, pk, type FROM pragma_table_info(?)")
        .all(table)
        .map((column) => ({ name: column.name, generated: column.pk === 1 && /^INTEGER$/i.test(column.type) && table === "turns" }));
    const keyOf = `CASE WHEN s.n % ${keys} = 0 THEN t.key_hash ELSE 'prefill-key-' || (s.n % ${keys}) END`;
    const session = copyColumns(columnsOf("sessions"), SESSION_COPIED, keyOf);
    const turn = copyColumns(columnsOf("turns"), TURN_COPIED, keyOf);
    const series = "WITH RECURSIVE s(n) AS (SELECT ? UNION ALL SELECT n + 1 FROM s WHERE n < ?)";
    const insertSessions = db.prepare(
      `INSERT INTO sessions (${session.names}) ${series} SELECT ${session.values} FROM s, sessions t WHERE t.id = '${TEMPLATE}'`,
    );
    const insertTurns = db.prepare(
      `INSERT INTO turns (${turn.names}) ${series} SELECT ${turn.values} FROM s, turns t WHERE t.session_id = '${TEMPLATE}' ORDER BY s.n, t.position`,
    );
    const batch = db.transaction((from, to) => {
      insertSessions.run(from, to);
      insertTurns.run(from, to);
    });
    for (let from = 1; from <= sessions; from += SESSIONS_PER_BATCH) batch(from, Math.min(sessions, from + SESSIONS_PER_BATCH - 1));
    if (analyze) db.exec("ANALYZE");
    db.pragma("wal_checkpoint(TRUNCATE)");
  } finally {
    db.close();
  }
}

async function fillPostgres(url, sessions, keys, analyze) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const columnsOf = async (table) =>
      (
        await client.query(
          "SELECT column_name AS name, column_default AS def FROM information_schema.columns WHERE table_name = $1 AND table_schema = current_schema() ORDER BY ordinal_position",
          [table],
        )
      ).rows.map((column) => ({ name: column.name, generated: String(column.def ?? "").startsWith("nextval(") }));
    const keyOf = `CASE WHEN s.n % ${keys} = 0 THEN t.key_hash ELSE 'prefill-key-' || (s.n % ${keys})::text END`;
    const session = copyColumns(await columnsOf("sessions"), SESSION_COPIED, keyOf);
    const turn = copyColumns(await columnsOf("turns"), TURN_COPIED, keyOf);
    for (let from = 1; from <= sessions; from += SESSIONS_PER_BATCH) {
      const to = Math.min(sessions, from + SESSIONS_PER_BATCH - 1);
      await client.query("BEGIN");
      await client.query(
        `INSERT INTO sessions (${session.names}) SELECT ${session.values} FROM generate_series($1::bigint, $2::bigint) AS s(n), sessions t WHERE t.id = '${TEMPLATE}' ORDER BY s.n`,
        [from, to],
      );
      await client.query(
        `INSERT INTO turns (${turn.names}) SELECT ${turn.values} FROM generate_series($1::bigint, $2::bigint) AS s(n), turns t WHERE t.session_id = '${TEMPLATE}' ORDER BY s.n, t.position`,
        [from, to],
      );
      await client.query("COMMIT");
    }
    if (analyze) await client.query("ANALYZE");
  } finally {
    await client.end();
  }
}

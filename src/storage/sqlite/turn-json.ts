import type { NewTurn } from "../turns.js";
import { joinPrompt } from "../prompt-heads.js";
import { turnJsonColumns, type TurnJsonColumns } from "../rows.js";

/*
 * Turn JSON made once (docs/performance.md#turn-json-made-once). A turn
 * that completes alone is written three times from the same JSON: its
 * journal line, its size in the replay cache, then its SQLite row. The
 * journal line is made of the row's JSON columns (turnJsonColumns), which
 * are kept for the turn's commit, so its tool calls, usage, audit and
 * carriers are turned into JSON once, not three times. Removing it:
 * `journalLine` returns JSON.stringify({ turn }) beside its time, and
 * `jsonColumnsOf` makes the columns each time.
 */

/** The columns each journaled turn's line was made of, for its commit (a turn is never changed once it is made). */
const madeForJournal = new WeakMap<NewTurn, TurnJsonColumns>();

/** The turn's JSON columns: those its journal line was made of, else made now. */
export function jsonColumnsOf(turn: NewTurn): TurnJsonColumns {
  return madeForJournal.get(turn) ?? turnJsonColumns(turn);
}

/** The fields of a turn whose JSON is a column of its row, each spelled as the turn's field and TurnJsonColumns' key. */
const JSON_FIELDS = ["toolCalls", "reasoningDetails", "nativeRecord", "usage", "audit"] as const;

/**
 * The turn as JSON for its journal line, its columns kept for its commit.
 * The prompt comes first, written from the text its commit stores; then
 * each field whose column is not null, as that column's text (the same
 * text JSON.stringify writes for the field inside the turn); then the
 * other fields. JSON.parse gives the same turn whatever the order of its keys.
 */
export function journalJson(turn: NewTurn): string {
  const columns = turnJsonColumns(turn);
  madeForJournal.set(turn, columns);
  let line = `{"prompt":${joinPrompt(columns.prompt.head?.text, columns.prompt.rest)}`;
  const others: Record<string, unknown> = { ...turn, prompt: undefined };
  for (const field of JSON_FIELDS) {
    const column = columns[field];
    if (column === null) continue; // absent, or no tool calls: stringified below with the others, as it is
    line += `,"${field}":${column}`;
    others[field] = undefined;
  }
  const rest = JSON.stringify(others);
  return rest.length > 2 ? `${line},${rest.slice(1)}` : `${line}}`;
}

import { callKeyOf } from "../../conversation/fingerprint.js";
import type { NewTurn } from "../turns.js";
import { joinPrompt } from "../prompt-heads.js";
import { turnJsonColumns, type TurnJsonColumns } from "../rows.js";

/*
 * Turn columns made once (docs/performance.md#turn-columns-made-once). A
 * turn that completes alone is written three times from the same values:
 * its journal line, its entry in the replay cache (its call key, and its
 * carriers' size), then its SQLite row; a turn committed at once, twice.
 * Each value is made the first time one of them asks, and kept with the
 * turn: its prompt's split, the JSON of its tool calls, usage, audit and
 * carriers, and its call key (a SHA-256). The journal line is made of the
 * row's JSON columns rather than by stringifying the turn whole. Removing
 * it: `columnsOf` makes the columns each time, and `journalJson` returns
 * JSON.stringify(turn).
 */

/** What a turn's journal line, replay cache entry and row are made of. */
export interface TurnColumns {
  readonly json: TurnJsonColumns;
  /** callKeyOf(turn.toolCalls). */
  readonly callKey: string | undefined;
}

/** Each turn's columns while it is alive (a turn is never changed once it is made). */
const made = new WeakMap<NewTurn, TurnColumns>();

/** The turn's columns, made the first time they are asked for. */
export function columnsOf(turn: NewTurn): TurnColumns {
  let columns = made.get(turn);
  if (!columns) made.set(turn, (columns = { json: turnJsonColumns(turn), callKey: callKeyOf(turn.toolCalls) }));
  return columns;
}

/** The fields of a turn whose JSON is a column of its row, each spelled as the turn's field and TurnJsonColumns' key. */
const JSON_FIELDS = ["toolCalls", "reasoningDetails", "nativeRecord", "usage", "audit"] as const;

/**
 * The turn as JSON for its journal line. The prompt comes first, written
 * from the text its commit stores; then each field whose column is not
 * null, as that column's text (the text JSON.stringify writes for the field
 * inside the turn); then the other fields. JSON.parse gives the same turn
 * whatever the order of its keys.
 */
export function journalJson(turn: NewTurn): string {
  const { json } = columnsOf(turn);
  let line = `{"prompt":${joinPrompt(json.prompt.head?.text, json.prompt.rest)}`;
  const others: Record<string, unknown> = { ...turn, prompt: undefined };
  for (const field of JSON_FIELDS) {
    const column = json[field];
    if (column === null) continue; // absent, or no tool calls: stringified below with the others, as it is
    line += `,"${field}":${column}`;
    others[field] = undefined;
  }
  const rest = JSON.stringify(others);
  return rest.length > 2 ? `${line},${rest.slice(1)}` : `${line}}`;
}

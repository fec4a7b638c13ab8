import { createHash } from "node:crypto";
import type { ChatMessage } from "../providers/contract.js";
import { RecentHeads, type HeadColumns } from "./recent-heads.js";

/*
 * Prompt heads stored once (docs/performance.md#prompt-heads-stored-once).
 * An agent's first request starts with tens of KB of instructions (system
 * and developer messages) that are the same for every session it opens.
 * A turn's stored prompt is split in two: its head (the leading system and
 * developer messages, when their JSON is long) goes to `prompt_heads`,
 * keyed by the SHA-256 of that JSON, written once for every session that
 * sends it; the turn's `prompt` column keeps the rest and `prompt_head`
 * names the head. The prompt as stored before is the two joined, byte for
 * byte (joinPrompt, STORED_PROMPT in SQL), so everything that reads a
 * turn's prompt answers as before. Removing the mechanism: write every
 * prompt whole (splitPrompt returning no head); rows written with a head
 * still read through the join.
 */

/** A head shorter than this (characters of JSON) stays in the turn's row: one short row is cheaper than a lookup. */
export const PROMPT_HEAD_MIN_CHARS = 2048;

/** A turn's prompt as stored: the JSON of its messages after the head, and the head when it is stored apart. */
export interface PromptColumns {
  readonly rest: string;
  readonly head: HeadColumns | undefined;
}

const isInstruction = (message: ChatMessage): boolean => message.role === "system" || message.role === "developer";

/**
 * The columns for a turn's prompt. The head is the leading run of system
 * and developer messages: never a user's words, so a search of the user's
 * messages reads the turn's own column alone. JSON text holds no NUL, so
 * neither part needs PostgreSQL's escape (nul-escape.ts) and the SQL join
 * sees the text as written.
 */
export function splitPrompt(prompt: readonly ChatMessage[]): PromptColumns {
  let headLength = 0;
  while (headLength < prompt.length && isInstruction(prompt[headLength])) headLength++;
  if (headLength === 0) return { rest: JSON.stringify(prompt), head: undefined };
  const head = recentHeads.columnsOf(headLength === prompt.length ? prompt : prompt.slice(0, headLength), makeHead);
  if (!head) return { rest: JSON.stringify(prompt), head: undefined };
  return { rest: headLength === prompt.length ? "[]" : JSON.stringify(prompt.slice(headLength)), head };
}

/** The heads of the prompts split lately, reused when the next one is equal (recent-heads.ts). */
const recentHeads = new RecentHeads();

/** A head's columns, or none when it is too short to be stored apart. */
function makeHead(this: void, messages: readonly ChatMessage[]): HeadColumns | undefined {
  const text = JSON.stringify(messages);
  return text.length < PROMPT_HEAD_MIN_CHARS ? undefined : { hash: createHash("sha256").update(text).digest("hex"), text };
}

/** The prompt's JSON as it was asked for: the head's messages, then the rest's (two JSON arrays made one). */
export function joinPrompt(headText: string | null | undefined, rest: string): string {
  if (headText === null || headText === undefined) return rest;
  if (rest === "[]") return headText;
  return `${headText.slice(0, -1)},${rest.slice(1)}`;
}

/**
 * joinPrompt in SQL, the same in SQLite and PostgreSQL: the full prompt
 * of the turn row `t`, its head read by hash (NULL only if the head row
 * were missing, which no write allows).
 */
export function storedPromptSql(t: string): string {
  return `CASE WHEN ${t}.prompt_head IS NULL THEN ${t}.prompt ELSE (SELECT CASE WHEN ${t}.prompt = '[]' THEN h.text
            ELSE substr(h.text, 1, length(h.text) - 1) || ',' || substr(${t}.prompt, 2) END FROM prompt_heads h WHERE h.hash = ${t}.prompt_head) END`;
}

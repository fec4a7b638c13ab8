import type { JsonObject } from "../../providers/contract.js";
import type { ResponseAnswer, ResponseQuery, ResponseRecord, StoredConversation, StoredItem, StoredResponse } from "../responses.js";
import { conversationWithHistory, inputItemsOf, storedConversation, storedResponse, withHistory, type ConversationRow, type ResponseRow } from "../rows.js";
import type { ResponseStorage } from "../storage.js";
import type { Sql } from "./connection.js";
import { checkpointInForce } from "./pg-checkpoints.js";
import { run, transaction } from "./run.js";

const INSERT = `INSERT INTO responses (id, parent_id, session_id, model, created_at, conversation_id, messages, body, input_items, key_hash) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`;
const INSERT_ITEM = `INSERT INTO response_items (id, response_id, item) VALUES ($1, $2, $3) ON CONFLICT (id) DO UPDATE SET response_id = excluded.response_id, item = excluded.item`;
const UPSERT_CONVERSATION = `
  INSERT INTO response_conversations (id, session_id, last_response_id, created_at, updated_at, key_hash) VALUES ($1, $2, $3, $4, $4, $5)
  ON CONFLICT (id) DO UPDATE SET session_id = excluded.session_id, last_response_id = excluded.last_response_id, updated_at = excluded.updated_at`;
const GET = `SELECT id, session_id, key_hash, body FROM responses WHERE id = $1 AND body IS NOT NULL`;
const GET_WITH_INPUT_ITEMS = `SELECT id, session_id, key_hash, body, input_items FROM responses WHERE id = $1 AND body IS NOT NULL`;
// oldest first: walk the parent links up from the given response; the last row, the response itself, carries its columns
const GET_WITH_HISTORY = `
  WITH RECURSIVE chain(id, parent_id, messages, depth, session_id, key_hash, body) AS (
    SELECT id, parent_id, messages, 0, session_id, key_hash, body FROM responses WHERE id = $1 AND body IS NOT NULL
    UNION ALL
    SELECT r.id, r.parent_id, r.messages, chain.depth + 1, NULL::text, NULL::text, NULL::text FROM responses r JOIN chain ON r.id = chain.parent_id
  )
  SELECT id, messages, session_id, key_hash, body FROM chain ORDER BY depth DESC`;
const FORGET = `UPDATE responses SET body = NULL, input_items = NULL WHERE id = $1 AND body IS NOT NULL`;
const FORGET_ITEMS = `DELETE FROM response_items WHERE response_id = $1`;
// a link nobody needs any more: not retrievable, continued by no response, the end of no conversation
const UNNEEDED = `
  SELECT parent_id FROM responses r WHERE id = $1 AND body IS NULL
     AND NOT EXISTS (SELECT 1 FROM responses c WHERE c.parent_id = r.id)
     AND NOT EXISTS (SELECT 1 FROM response_conversations v WHERE v.last_response_id = r.id)`;
const REMOVE = `DELETE FROM responses WHERE id = $1`;
const ITEMS = `SELECT i.id, i.item, r.session_id, r.key_hash FROM response_items i JOIN responses r ON r.id = i.response_id WHERE i.id = ANY($1::text[])`;
const CONVERSATION = `SELECT id, session_id, key_hash, last_response_id FROM response_conversations WHERE id = $1`;
// one row per response of the chain ending at the conversation's last response, oldest first (one row, messages NULL, when it has none)
const CONVERSATION_WITH_HISTORY = `
  WITH RECURSIVE chain(id, parent_id, messages, depth) AS (
    SELECT r.id, r.parent_id, r.messages, 0 FROM response_conversations v JOIN responses r ON r.id = v.last_response_id WHERE v.id = $1
    UNION ALL
    SELECT r.id, r.parent_id, r.messages, chain.depth + 1 FROM responses r JOIN chain ON r.id = chain.parent_id
  )
  SELECT v.id, v.session_id, v.key_hash, v.last_response_id, chain.messages
  FROM response_conversations v LEFT JOIN chain ON true WHERE v.id = $1 ORDER BY chain.depth DESC`;

const NO_ITEMS: ReadonlyMap<string, StoredItem> = new Map();

/**
 * The Responses API's chained responses and conversations in PostgreSQL.
 * A save is one transaction committed before it resolves, so a
 * `previous_response_id` or a `conversation` written on one instance
 * resolves on every other at once: nothing is batched behind a timer.
 */
export class PgResponses implements ResponseStorage {
  constructor(private readonly sql: Sql) {}

  async save(record: ResponseRecord, items: readonly JsonObject[]): Promise<void> {
    const inputItems = record.body !== null && record.inputItems ? JSON.stringify(record.inputItems) : null;
    const body = record.body === null ? null : JSON.stringify(record.body);
    const values = [
      record.id,
      record.parentId,
      record.sessionId,
      record.model,
      record.createdAt,
      record.conversationId,
      JSON.stringify(record.messages),
      body,
      inputItems,
      record.keyHash,
    ];
    const kept = record.body === null ? [] : items.filter((item) => typeof item.id === "string");
    if (kept.length === 0 && !record.conversationId) {
      await run(this.sql, INSERT, values);
      return;
    }
    await transaction(this.sql, async (tx) => {
      await run(tx, INSERT, values);
      for (const item of kept) await run(tx, INSERT_ITEM, [item.id, record.id, JSON.stringify(item)]);
      if (record.conversationId) await run(tx, UPSERT_CONVERSATION, [record.conversationId, record.sessionId, record.id, Date.now(), record.keyHash]);
    });
  }

  /** The parts asked for are sent together; a history's checkpoint is read once the chain's session is known. */
  async get(query: ResponseQuery): Promise<ResponseAnswer> {
    const [response, conversation, items] = await Promise.all([
      query.response === undefined ? undefined : this.response(query.response, query.also),
      query.conversation === undefined ? undefined : this.conversation(query.conversation, query.also === "history"),
      query.items && query.items.length > 0 ? this.items(query.items) : NO_ITEMS,
    ]);
    return { response, conversation, items };
  }

  private async response(id: string, also: ResponseQuery["also"]): Promise<StoredResponse | undefined> {
    if (also === "history") {
      const stored = withHistory(await run<ResponseRow>(this.sql, GET_WITH_HISTORY, [id]));
      const checkpoint = stored && (await checkpointInForce(this.sql, stored.sessionId, stored.id));
      return checkpoint ? { ...stored, checkpoint } : stored;
    }
    if (also === "inputItems") {
      const [row] = await run<ResponseRow>(this.sql, GET_WITH_INPUT_ITEMS, [id]);
      return row && { ...storedResponse(row), inputItems: inputItemsOf(row) };
    }
    const [row] = await run<ResponseRow>(this.sql, GET, [id]);
    return row && storedResponse(row);
  }

  private async conversation(id: string, history: boolean): Promise<StoredConversation | undefined> {
    if (history) {
      const stored = conversationWithHistory(await run<ConversationRow>(this.sql, CONVERSATION_WITH_HISTORY, [id]));
      const checkpoint = stored && (await checkpointInForce(this.sql, stored.sessionId, stored.lastResponseId));
      return checkpoint ? { ...stored, checkpoint } : stored;
    }
    const [row] = await run<ConversationRow>(this.sql, CONVERSATION, [id]);
    return row && storedConversation(row);
  }

  private async items(ids: readonly string[]): Promise<Map<string, StoredItem>> {
    const rows = await run<{ id: string; item: string; session_id: string; key_hash: string | null }>(this.sql, ITEMS, [ids]);
    return new Map(rows.map((row) => [row.id, { item: JSON.parse(row.item) as JsonObject, sessionId: row.session_id, keyHash: row.key_hash }]));
  }

  async delete(id: string): Promise<boolean> {
    return transaction(this.sql, async (tx) => {
      if ((await run(tx, FORGET, [id])).count === 0) return false;
      await run(tx, FORGET_ITEMS, [id]);
      let next: string | null = id;
      while (next) {
        const [row]: { parent_id: string | null }[] = await run<{ parent_id: string | null }>(tx, UNNEEDED, [next]);
        if (!row) break;
        await run(tx, REMOVE, [next]);
        next = row.parent_id;
      }
      return true;
    });
  }
}

import type { JsonObject } from "../../providers/contract.js";
import type { Checkpoint } from "../checkpoints.js";
import type { ResponseAnswer, ResponseQuery, ResponseRecord, StoredConversation, StoredItem, StoredResponse } from "../responses.js";
import { conversationWithHistory, inputItemsOf, storedConversation, storedResponse, withHistory, type ConversationRow, type ResponseRow } from "../rows.js";
import type { ResponseStorage } from "../storage.js";
import type { Db } from "./database.js";
import { GroupCommit } from "./group-commit.js";
import { writeOutsideReplay } from "./replay-cache.js";

interface PendingResponse {
  readonly record: ResponseRecord;
  readonly items: readonly JsonObject[];
}

const NO_ITEMS: ReadonlyMap<string, StoredItem> = new Map();

/**
 * SQLite persistence of the Responses API (tables from migrations.ts).
 * `inForce` is the checkpoint in force on a chain of a session
 * (CheckpointStore.inForce), answered with the chain's history.
 */
export class ResponseStore implements ResponseStorage {
  private readonly statements;
  /** One transaction for a batch; built once (better-sqlite3 builds a wrapper per `transaction()` call). */
  private readonly writeMany: (responses: readonly PendingResponse[]) => void[];

  constructor(
    private readonly db: Db,
    private readonly inForce: (sessionId: string, parentId: string) => Checkpoint | undefined,
  ) {
    this.statements = {
      insert: db.prepare(
        "INSERT INTO responses (id, parent_id, session_id, key_hash, model, created_at, conversation_id, messages, body, input_items) VALUES (@id, @parentId, @sessionId, @keyHash, @model, @createdAt, @conversationId, @messages, @body, @inputItems)",
      ),
      insertItem: db.prepare("INSERT OR REPLACE INTO response_items (id, response_id, item) VALUES (?, ?, ?)"),
      get: db.prepare("SELECT id, session_id, key_hash, body FROM responses WHERE id = ? AND body IS NOT NULL"),
      getWithInputItems: db.prepare("SELECT id, session_id, key_hash, body, input_items FROM responses WHERE id = ? AND body IS NOT NULL"),
      // oldest first: walk the parent links up from the given response; the last row, the response itself, carries its columns
      getWithHistory: db.prepare(`
        WITH RECURSIVE chain(id, parent_id, messages, depth, session_id, key_hash, body) AS (
          SELECT id, parent_id, messages, 0, session_id, key_hash, body FROM responses WHERE id = ? AND body IS NOT NULL
          UNION ALL
          SELECT r.id, r.parent_id, r.messages, chain.depth + 1, NULL, NULL, NULL FROM responses r JOIN chain ON r.id = chain.parent_id
        )
        SELECT id, messages, session_id, key_hash, body FROM chain ORDER BY depth DESC`),
      ancestry: db.prepare(`
        WITH RECURSIVE chain(id, parent_id, depth) AS (
          SELECT id, parent_id, 0 FROM responses WHERE id = ?
          UNION ALL
          SELECT r.id, r.parent_id, chain.depth + 1 FROM responses r JOIN chain ON r.id = chain.parent_id
        )
        SELECT id FROM chain ORDER BY depth DESC`),
      forget: db.prepare("UPDATE responses SET body = NULL, input_items = NULL WHERE id = ? AND body IS NOT NULL"),
      forgetItems: db.prepare("DELETE FROM response_items WHERE response_id = ?"),
      // a link nobody needs any more: not retrievable, continued by no response, the end of no conversation
      unneeded: db.prepare(
        `SELECT parent_id FROM responses r WHERE id = ? AND body IS NULL
           AND NOT EXISTS (SELECT 1 FROM responses c WHERE c.parent_id = r.id)
           AND NOT EXISTS (SELECT 1 FROM response_conversations v WHERE v.last_response_id = r.id)`,
      ),
      remove: db.prepare("DELETE FROM responses WHERE id = ?"),
      items: db.prepare(
        "SELECT i.id, i.item, r.session_id, r.key_hash FROM response_items i JOIN responses r ON r.id = i.response_id WHERE i.id IN (SELECT value FROM json_each(?))",
      ),
      conversation: db.prepare("SELECT id, session_id, key_hash, last_response_id FROM response_conversations WHERE id = ?"),
      // one row per message batch of the chain ending at the conversation's last response, oldest first (one row, messages null, when it has none)
      conversationWithHistory: db.prepare(`
        WITH RECURSIVE chain(id, parent_id, messages, depth) AS (
          SELECT r.id, r.parent_id, r.messages, 0 FROM response_conversations v JOIN responses r ON r.id = v.last_response_id WHERE v.id = @id
          UNION ALL
          SELECT r.id, r.parent_id, r.messages, chain.depth + 1 FROM responses r JOIN chain ON r.id = chain.parent_id
        )
        SELECT v.id, v.session_id, v.key_hash, v.last_response_id, chain.messages
        FROM response_conversations v LEFT JOIN chain ON true WHERE v.id = @id ORDER BY chain.depth DESC`),
      upsertConversation: db.prepare(
        `INSERT INTO response_conversations (id, session_id, key_hash, last_response_id, created_at, updated_at) VALUES (@id, @sessionId, @keyHash, @lastResponseId, @now, @now)
         ON CONFLICT(id) DO UPDATE SET session_id = excluded.session_id, last_response_id = excluded.last_response_id, updated_at = excluded.updated_at`,
      ),
    };
    this.writeMany = db.transaction((responses: readonly PendingResponse[]) => responses.map(({ record, items }) => this.write(record, items)));
  }

  /** Stores a response, its output items (when retrievable) and, for a named conversation, the conversation's new end; one transaction. */
  saveNow(record: ResponseRecord, items: readonly JsonObject[]): void {
    // the replay cache on this connection reads turns, not responses: storing one must not empty it
    writeOutsideReplay(this.db, () => this.writeMany([{ record, items }]));
  }

  /** The same write, group-committed with the responses finished in the same turn of the event loop (see GroupCommit). */
  save(record: ResponseRecord, items: readonly JsonObject[]): Promise<void> {
    return this.durable.add({ record, items });
  }

  private readonly durable = new GroupCommit<PendingResponse, void>(
    (responses) => writeOutsideReplay(this.db, () => this.writeMany(responses)),
    (response) => this.saveNow(response.record, response.items),
  );

  private write(record: ResponseRecord, items: readonly JsonObject[]): void {
    const inputItems = record.body !== null && record.inputItems ? JSON.stringify(record.inputItems) : null;
    this.statements.insert.run({
      ...record,
      messages: JSON.stringify(record.messages),
      body: record.body === null ? null : JSON.stringify(record.body),
      inputItems,
    });
    if (record.body !== null)
      for (const item of items) if (typeof item.id === "string") this.statements.insertItem.run(item.id, record.id, JSON.stringify(item));
    if (record.conversationId)
      this.statements.upsertConversation.run({
        id: record.conversationId,
        sessionId: record.sessionId,
        keyHash: record.keyHash,
        lastResponseId: record.id,
        now: Date.now(),
      });
  }

  async get(query: ResponseQuery): Promise<ResponseAnswer> {
    return {
      response: query.response === undefined ? undefined : this.response(query.response, query.also),
      conversation: query.conversation === undefined ? undefined : this.conversation(query.conversation, query.also === "history"),
      items: query.items && query.items.length > 0 ? this.items(query.items) : NO_ITEMS,
    };
  }

  private response(id: string, also: ResponseQuery["also"]): StoredResponse | undefined {
    if (also === "history") {
      const stored = withHistory(this.statements.getWithHistory.all(id) as ResponseRow[]);
      const checkpoint = stored && this.inForce(stored.sessionId, stored.id);
      return checkpoint ? { ...stored, checkpoint } : stored;
    }
    if (also === "inputItems") {
      const row = this.statements.getWithInputItems.get(id) as ResponseRow | undefined;
      return row && { ...storedResponse(row), inputItems: inputItemsOf(row) };
    }
    const row = this.statements.get.get(id) as ResponseRow | undefined;
    return row && storedResponse(row);
  }

  private conversation(id: string, history: boolean): StoredConversation | undefined {
    if (history) {
      const stored = conversationWithHistory(this.statements.conversationWithHistory.all({ id }) as ConversationRow[]);
      const checkpoint = stored && this.inForce(stored.sessionId, stored.lastResponseId);
      return checkpoint ? { ...stored, checkpoint } : stored;
    }
    const row = this.statements.conversation.get(id) as ConversationRow | undefined;
    return row && storedConversation(row);
  }

  private items(ids: readonly string[]): Map<string, StoredItem> {
    const rows = this.statements.items.all(JSON.stringify(ids)) as { id: string; item: string; session_id: string; key_hash: string | null }[];
    return new Map(rows.map((row) => [row.id, { item: JSON.parse(row.item) as JsonObject, sessionId: row.session_id, keyHash: row.key_hash }]));
  }

  /** Ids of the chain ending at response `id`, oldest first: compaction finds the checkpoint in force by them. */
  ancestry(id: string): string[] {
    return (this.statements.ancestry.all(id) as { id: string }[]).map((row) => row.id);
  }

  /**
   * Makes a response unretrievable and drops its items; true when it was
   * retrievable. Its messages stay only while a later response or a
   * conversation continues from it (so their history stays whole); links
   * nobody needs any more are removed, up the chain.
   */
  async delete(id: string): Promise<boolean> {
    return this.db.transaction(() => {
      if (this.statements.forget.run(id).changes === 0) return false;
      this.statements.forgetItems.run(id);
      let next: string | null = id;
      while (next) {
        const row = this.statements.unneeded.get(next) as { parent_id: string | null } | undefined;
        if (!row) break;
        this.statements.remove.run(next);
        next = row.parent_id;
      }
      return true;
    })();
  }
}

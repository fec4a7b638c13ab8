import type { Db } from "../store/database.js";
import type { ChatMessage, JsonObject } from "../plugins/contract.js";

/** One stored response: the envelope clients GET, and the conversation it ended. */
export interface StoredResponse {
  readonly id: string;
  readonly sessionId: string;
  readonly model: string;
  readonly createdAt: number;
  readonly previousResponseId: string | null;
  readonly conversationId: string | null;
  /** Canonical history after this response: earlier turns, this input, this output. Instructions excluded (they do not carry over). */
  readonly messages: ChatMessage[];
  readonly body: JsonObject;
}

export interface StoredConversation {
  readonly id: string;
  readonly sessionId: string;
  readonly messages: ChatMessage[];
}

/** An output item found by id, with the session of the response that produced it. */
export interface StoredItem {
  readonly item: JsonObject;
  readonly responseId: string;
  readonly sessionId: string;
}

interface ResponseRow {
  id: string;
  session_id: string;
  model: string;
  created_at: number;
  previous_response_id: string | null;
  conversation_id: string | null;
  messages: string;
  body: string;
}

/** SQLite persistence of the Responses API (tables from migrations.ts). */
export class ResponseStore {
  private readonly statements;

  constructor(private readonly db: Db) {
    this.statements = {
      insert: db.prepare(
        "INSERT INTO responses (id, session_id, model, created_at, previous_response_id, conversation_id, messages, body) VALUES (@id, @sessionId, @model, @createdAt, @previousResponseId, @conversationId, @messages, @body)",
      ),
      insertItem: db.prepare("INSERT OR REPLACE INTO response_items (id, response_id, item) VALUES (?, ?, ?)"),
      get: db.prepare("SELECT * FROM responses WHERE id = ?"),
      delete: db.prepare("DELETE FROM responses WHERE id = ?"),
      item: db.prepare("SELECT i.item, i.response_id, r.session_id FROM response_items i JOIN responses r ON r.id = i.response_id WHERE i.id = ?"),
      conversation: db.prepare("SELECT id, session_id, messages FROM response_conversations WHERE id = ?"),
      upsertConversation: db.prepare(
        `INSERT INTO response_conversations (id, session_id, messages, last_response_id, created_at, updated_at) VALUES (@id, @sessionId, @messages, @lastResponseId, @now, @now)
         ON CONFLICT(id) DO UPDATE SET session_id = excluded.session_id, messages = excluded.messages, last_response_id = excluded.last_response_id, updated_at = excluded.updated_at`,
      ),
    };
  }

  /** Stores a response and its output items in one transaction. */
  save(response: StoredResponse, items: readonly JsonObject[]): void {
    this.db.transaction(() => {
      this.statements.insert.run({ ...response, messages: JSON.stringify(response.messages), body: JSON.stringify(response.body) });
      for (const item of items) if (typeof item.id === "string") this.statements.insertItem.run(item.id, response.id, JSON.stringify(item));
    })();
  }

  get(id: string): StoredResponse | undefined {
    const row = this.statements.get.get(id) as ResponseRow | undefined;
    if (!row) return undefined;
    return {
      id: row.id,
      sessionId: row.session_id,
      model: row.model,
      createdAt: row.created_at,
      previousResponseId: row.previous_response_id,
      conversationId: row.conversation_id,
      messages: JSON.parse(row.messages) as ChatMessage[],
      body: JSON.parse(row.body) as JsonObject,
    };
  }

  /** Removes a response and its items; true when it existed. */
  delete(id: string): boolean {
    return this.statements.delete.run(id).changes > 0;
  }

  item(id: string): StoredItem | undefined {
    const row = this.statements.item.get(id) as { item: string; response_id: string; session_id: string } | undefined;
    return row ? { item: JSON.parse(row.item) as JsonObject, responseId: row.response_id, sessionId: row.session_id } : undefined;
  }

  conversation(id: string): StoredConversation | undefined {
    const row = this.statements.conversation.get(id) as { id: string; session_id: string; messages: string } | undefined;
    return row ? { id: row.id, sessionId: row.session_id, messages: JSON.parse(row.messages) as ChatMessage[] } : undefined;
  }

  saveConversation(conversation: StoredConversation, lastResponseId: string): void {
    this.statements.upsertConversation.run({ id: conversation.id, sessionId: conversation.sessionId, messages: JSON.stringify(conversation.messages), lastResponseId, now: Date.now() });
  }
}

import type { ChatMessage, JsonObject } from "../providers/contract.js";
import type { Checkpoint } from "./checkpoints.js";

/** What one response added to its conversation, linked to the response it continued. */
export interface ResponseRecord {
  readonly id: string;
  /** The response this one continued (`previous_response_id`, or the conversation's last response). */
  readonly parentId: string | null;
  readonly sessionId: string;
  /** The data scope of the access key that created it: only that key (and the owner key) reads or continues it. */
  readonly keyHash: string;
  readonly model: string;
  readonly createdAt: number;
  readonly conversationId: string | null;
  /** This response's input and output as canonical chat messages (instructions excluded: they do not carry over). */
  readonly messages: ChatMessage[];
  /** The Response object clients GET; null when it must not be retrievable (`store: false`). */
  readonly body: JsonObject | null;
  /** Its input as GET /v1/responses/{id}/input_items lists it; kept only with a body. */
  readonly inputItems?: readonly JsonObject[] | undefined;
}

/** A retrievable response. */
export interface StoredResponse {
  readonly id: string;
  readonly sessionId: string;
  /** Null on a row stored before responses had an owner: the owner key's. */
  readonly keyHash: string | null;
  readonly body: JsonObject;
  /** Its input as GET /v1/responses/{id}/input_items lists it (empty when stored before they were kept); only when asked. */
  readonly inputItems?: JsonObject[];
  /** The whole conversation up to and including it, oldest message first; only when asked. */
  readonly history?: ChatMessage[];
  /** With its history: the compaction checkpoint in force on the chain ending at it (anchored deepest on it, newest on a tie). */
  readonly checkpoint?: Checkpoint;
}

export interface StoredConversation {
  readonly id: string;
  readonly sessionId: string;
  /** The key that created the conversation (null: from before, the owner key's). */
  readonly keyHash: string | null;
  readonly lastResponseId: string;
  /** The whole conversation up to and including its last response, oldest message first; only when asked. */
  readonly history?: ChatMessage[];
  /** With its history: the compaction checkpoint in force on the chain ending at its last response. */
  readonly checkpoint?: Checkpoint;
}

/** An output item found by id, with the session of the response that produced it. */
export interface StoredItem {
  readonly item: JsonObject;
  readonly sessionId: string;
  readonly keyHash: string | null;
}

/** What ResponseStorage.get reads: any of these parts, in one call. */
export interface ResponseQuery {
  /** A retrievable response by id (deleted ones, those stored with `store: false`, and unknown ids are absent). */
  readonly response?: string;
  /** A named conversation, by its stored id. */
  readonly conversation?: string;
  /** Output items by id: those a request's input references. */
  readonly items?: readonly string[];
  /**
   * For the response: its input items (GET …/input_items). For the
   * response or the conversation: its history and the checkpoint in force
   * on it, what a request continuing it builds on (the conversation's
   * history reaches its last response, retrievable or not).
   */
  readonly also?: "inputItems" | "history";
}

/** ResponseStorage.get's answer: the parts not asked for, or not found, are absent. */
export interface ResponseAnswer {
  readonly response: StoredResponse | undefined;
  readonly conversation: StoredConversation | undefined;
  /** The items found, by id. */
  readonly items: ReadonlyMap<string, StoredItem>;
}

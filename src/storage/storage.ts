import type { CarrierField, ChatMessage, JsonObject } from "../providers/contract.js";
import type { Checkpoint, CheckpointArchive, NewCheckpoint } from "./checkpoints.js";
import type { RequestLookup, RequestLookupAnswer } from "./request-lookup.js";
import type { EnvelopeKey } from "./envelope-keys.js";
import type { KeyUse, NewKey, StoredKey } from "./keys.js";
import type { ResponseRecord, StoredConversation, StoredItem, StoredResponse } from "./responses.js";
import type {
  BranchResult,
  DepthAsked,
  DepthMatch,
  FingerprintMatch,
  NewTurn,
  ReplaySource,
  SessionDetail,
  SessionModelConfig,
  SessionSummary,
} from "./turns.js";
import type { Verdict } from "./verdicts.js";
import type { SessionHistory } from "./session-history.js";

/**
 * Everything carrierd keeps, behind one narrow port: the gateway, the CLI
 * and every capability (replay, verdicts, the Responses API, compaction)
 * reach their state only through this. A backend is one folder that
 * implements it (src/storage/sqlite is the first) and passes the contract
 * suite every backend must pass.
 *
 * Every operation answers through a promise, so a backend whose rows are
 * read over the network fits behind it; nothing above the port may assume
 * an answer arrives synchronously. The one exception is `turns.begin` and
 * the handle it returns: hints about the chat path, with no answer to wait
 * for.
 */
export interface Storage {
  readonly turns: TurnStorage;
  readonly catalogue: SessionCatalogue;
  readonly sessionConfig: SessionConfigStorage;
  readonly verdicts: VerdictStorage;
  readonly responses: ResponseStorage;
  readonly checkpoints: CheckpointStorage;
  /** Sessions and their turns as operators read them over HTTP (docs/api.md#session-history). */
  readonly history: SessionHistory;
  /**
   * What a chat request reads before its first upstream call, as one answer:
   * the key matches, the route's verdict fields, the sessions' model config
   * and the newest matches' carriers. A backend over the network answers it
   * in one round trip instead of one per part; each part is what its own
   * operation would answer, so nothing here is a cache.
   */
  lookup(query: RequestLookup): Promise<RequestLookupAnswer>;
  readonly keys: KeyStorage;
  readonly envelopeKeys: EnvelopeKeyStorage;
  /** Resolves once every turn made durable so far is where another process (a CLI command) reads it. */
  committed(): Promise<void>;
  /**
   * Whether the store answers now, for /health. A backend in this process
   * (SQLite) leaves it out: it is as available as the process. A backend
   * over the network answers within a bound.
   */
  reachable?(): Promise<boolean>;
  /** Lets go of the state (files, connections, timers); what is durable stays so. */
  close(): Promise<void>;
}

/** Position matching reads the newest few turns at a depth of a session: a session a client reuses for everything has thousands at depth 1. */
export const TURNS_PER_DEPTH = 8;

/** The turns replay reads and the chat path writes. */
export interface TurnStorage {
  /**
   * Stored turns per key (fingerprints and call keys, see TurnKeys), under
   * one API key's hash, most recent first; keys nothing matched are absent.
   */
  matchesFor(keyHash: string, keys: readonly string[]): Promise<Map<string, FingerprintMatch[]>>;
  /** The carriers of these turns, under the caller's keys (a request's message indexes); turns not found are absent. */
  replaySources<K>(turnIds: ReadonlyMap<K, string>): Promise<Map<K, ReplaySource>>;
  /**
   * The session's turns at these depths in their conversations (1-based,
   * NewTurn.depth) filed under this key's hash, per depth newest first and
   * at most TURNS_PER_DEPTH, each saying whether its stored prompt is the
   * one asked with: what position matching chooses from.
   */
  turnsAtDepths(keyHash: string, sessionId: string, asked: readonly DepthAsked[]): Promise<Map<number, DepthMatch[]>>;
  /**
   * A turn starts its upstream call. Until its `end`, a turn completing
   * beside it is not alone: the storage uses that to decide how to make the
   * next completed turn durable at the least cost to its answer.
   */
  begin(): TurnInFlight;
  /** Writes the completed turn (and its session when new); resolves once it is durable. The caller ends its answer after that. */
  save(turn: NewTurn): Promise<void>;
}

/** A turn between its upstream call and the end of its answer (see TurnStorage.begin). */
export interface TurnInFlight {
  /** Its request has gone upstream: the gateway waits for the answer now, and the storage may spend that moment on deferred writes. */
  wentUpstream(): void;
  /** Its answer was read through, failed, or was given up; a second call does nothing. */
  end(): void;
}

/** The sessions an operator lists, shows, branches and removes. */
export interface SessionCatalogue {
  exists(sessionId: string): Promise<boolean>;
  /** Creates an empty session when there is none of this id (an explicit X-Session-Id not seen yet, a verdict before the first turn). */
  ensure(sessionId: string, keyHash: string, model: string | null): Promise<void>;
  /** Sessions, most recently active first. */
  list(limit: number): Promise<SessionSummary[]>;
  show(sessionId: string): Promise<SessionDetail | undefined>;
  /**
   * A new session holding turns 1..at (all when undefined) of `sourceId`,
   * every carrier copied byte for byte, with the fingerprints stateless
   * clients find them by. Past the session's newest checkpoint the branch
   * gets the active turns and a copy of the checkpoint; inside or before the
   * summarised range, every turn up to `at`, all active. Undefined when the
   * source does not exist.
   */
  branch(sourceId: string, newId: string, at: number | undefined): Promise<BranchResult | undefined>;
  /** Removes the session and its turns; false when there was none. */
  remove(sessionId: string): Promise<boolean>;
}

/** Per-session verdict config: the rejections a session keeps so `--resume` keeps them. */
export interface SessionConfigStorage {
  /** Read-only for the caller (it may be shared from memory); `{}` for a session without one. */
  modelConfig(sessionId: string): Promise<Readonly<SessionModelConfig>>;
  /** Read-modify-write as one step, so two requests of one session cannot lose each other's patch. */
  patchModelConfig(sessionId: string, patch: (config: SessionModelConfig) => SessionModelConfig): Promise<void>;
  /** Removes the rejected carriers `predicate` selects from every session's config; returns how many sessions changed. */
  removeRejections(predicate: (provider: string, host: string, model: string, field: string) => boolean): Promise<number>;
}

/** Unknown-field verdicts: (provider, host, model, field) an upstream rejected. */
export interface VerdictStorage {
  /** Read per request: the backend answers from memory while nothing else wrote them. */
  fieldsFor(provider: string, host: string, model: string): Promise<readonly CarrierField[]>;
  /** Records (or renews) one verdict; returns it stamped. */
  record(verdict: Omit<Verdict, "recorded_at">): Promise<Verdict>;
  /** Oldest first. */
  list(): Promise<Verdict[]>;
  /** Deletes the verdicts `predicate` selects; returns them. */
  clear(predicate: (verdict: Verdict) => boolean): Promise<Verdict[]>;
}

/** The Responses API's chained responses and named conversations. */
export interface ResponseStorage {
  /** Stores a response, its output items (when retrievable) and a named conversation's new end, as one durable write. */
  save(record: ResponseRecord, items: readonly JsonObject[]): Promise<void>;
  get(id: string): Promise<StoredResponse | undefined>;
  /** The input items of a retrievable response; undefined when it is not retrievable. */
  inputItems(id: string): Promise<JsonObject[] | undefined>;
  /** The whole conversation up to and including response `id`, oldest message first. */
  history(id: string): Promise<ChatMessage[]>;
  /** Ids of the chain ending at response `id`, oldest first. */
  ancestry(id: string): Promise<string[]>;
  /** Makes a response unretrievable (links later responses need are kept); false when it was not retrievable. */
  delete(id: string): Promise<boolean>;
  /** An output item by id, with the session of the response that produced it. */
  item(id: string): Promise<StoredItem | undefined>;
  conversation(id: string): Promise<StoredConversation | undefined>;
}

/** Compaction's checkpoints and the turns they archive. */
export interface CheckpointStorage {
  /** Whether a session has any checkpoint: most have none, and then a chain need not be walked. */
  has(sessionId: string): Promise<boolean>;
  /** The checkpoint in force for a chain (response ids, oldest first): the one anchored deepest, newest on a tie. */
  forChain(chain: readonly string[]): Promise<Checkpoint | undefined>;
  /** Stores a checkpoint, deletes the one it supersedes and marks the summarised turns inactive, as one write; turns keep every carrier byte. */
  save(checkpoint: NewCheckpoint, archive: CheckpointArchive): Promise<Checkpoint>;
  /** A session's checkpoints, oldest first. */
  list(sessionId: string): Promise<Checkpoint[]>;
  /** Positions of a session's archived (summarised) turns. */
  archivedPositions(sessionId: string): Promise<Set<number>>;
}

/**
 * Access keys (docs/operators.md, "Access keys"). Every gateway on the
 * state keeps them in memory and polls `revision` to learn of a create,
 * revoke or rotate made anywhere (a CLI command, another instance).
 */
export interface KeyStorage {
  /** Changes whenever a key is created, revoked or rotated; not on usage. Cheap: polled several times a second. */
  revision(): Promise<number>;
  /** Every key, revoked and expired ones included, oldest first. */
  list(): Promise<StoredKey[]>;
  /** The keys whose secret hashes these are (one indexed read); hashes of no key are absent. */
  findBySecretHashes(secretHashes: readonly string[]): Promise<StoredKey[]>;
  /** Throws KeyExistsError when a key of that name exists, revoked or not. */
  create(key: NewKey): Promise<StoredKey>;
  /** False when no live key has that name. */
  revoke(name: string): Promise<boolean>;
  /** Replaces the secret's hash, keeping name, scopes and owner scope; false when no live key has that name. */
  rotate(name: string, secretHash: string): Promise<boolean>;
  /** Adds request counts and moves last-used times forward; does not change the revision. */
  recordUse(uses: readonly KeyUse[]): Promise<void>;
}

/**
 * The keys that seal encrypted_content envelopes (docs/operators.md,
 * "Envelope keys"), one row per generation. A generation is written once
 * and never changed: instances that add the same generation at the same
 * moment keep whichever row was written first and agree on it.
 */
export interface EnvelopeKeyStorage {
  /** Every key, oldest generation first. */
  list(): Promise<EnvelopeKey[]>;
  /** Writes `key` unless its generation exists already; answers every key after that, oldest first. */
  add(key: EnvelopeKey): Promise<EnvelopeKey[]>;
}

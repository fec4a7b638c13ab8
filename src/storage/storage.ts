import type { JsonObject } from "../providers/contract.js";
import type { Checkpoint, CheckpointArchive, NewCheckpoint } from "./checkpoints.js";
import type { TurnLookup, TurnLookupAnswer } from "./request-lookup.js";
import type { EnvelopeKey } from "./envelope-keys.js";
import type { KeyChange, KeyList, KeyQuery, KeyUse } from "./keys.js";
import type { ResponseAnswer, ResponseQuery, ResponseRecord } from "./responses.js";
import type { NewTurn } from "./turns.js";
import type { BranchResult, SessionDetail, SessionQuery, SessionSummary } from "./sessions.js";
import type { Rejection, Verdict, VerdictField } from "./verdicts.js";

/**
 * Everything carrierd keeps, behind one narrow port: the gateway, the CLI
 * and every capability (replay, verdicts, the Responses API, compaction)
 * reach their state only through this. A backend is one folder that
 * implements it (src/storage/sqlite, src/storage/postgres) and passes the
 * contract suite every backend must pass; docs/architecture.md#storage
 * names every operation and who calls it.
 *
 * Every operation answers through a promise, so a backend whose rows are
 * read over the network fits behind it; nothing above the port may assume
 * an answer arrives synchronously.
 */
export interface Storage {
  readonly turns: TurnStorage;
  readonly sessions: SessionStorage;
  readonly verdicts: VerdictStorage;
  readonly responses: ResponseStorage;
  readonly checkpoints: CheckpointStorage;
  readonly keys: KeyStorage;
  readonly envelopeKeys: EnvelopeKeyStorage;
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
   * What the turn pipeline reads of the stored turns, as one answer of the
   * parts the query asks for (TurnLookup): the request's read before its
   * first upstream call (the turns its keys match, the route's verdict
   * fields, the sessions' model config, the newest matches' carriers),
   * position matching's turns at depths of a session, and the carriers of
   * turns chosen that the request's read did not carry. A backend over the
   * network answers the request's read in one round trip.
   */
  lookup(query: TurnLookup): Promise<TurnLookupAnswer>;
  /**
   * Writes the completed turn (and its session when new); resolves once it
   * is durable. The caller ends its answer after that. How and when the
   * store makes it durable (alone, or shared with turns completing beside
   * it) is the store's own business.
   */
  save(turn: NewTurn): Promise<void>;
}

/**
 * The sessions an operator lists, shows, branches and removes: the CLI
 * (`sessions`, `chat --resume`), session history over HTTP
 * (docs/api.md#session-history) and compaction's scratch sessions.
 */
export interface SessionStorage {
  /**
   * Sessions, most recently active first (ties: id descending), from
   * `query.after` on, at most `query.limit`, of those the query's filters
   * and text search select (none set: every session).
   */
  list(query: SessionQuery): Promise<SessionSummary[]>;
  /**
   * A session with its model config, its turns oldest first (each with its
   * prompt, depth, recorded route, timings and replay decision, and its
   * carriers by kind and size) and its compaction; undefined when there is
   * none of this id.
   */
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

/**
 * Unknown-field verdicts: (provider, host, model, field) an upstream
 * rejected, in the verdict table and in the config of the session that met
 * the rejection (so `--resume` keeps them). Read per request through
 * TurnStorage.lookup.
 */
export interface VerdictStorage {
  /**
   * Records (or renews) one verdict per rejected field, creates the session
   * when it has no row yet (a rejection before its first turn) and adds the
   * fields to its config, read-modify-write as one step; returns the
   * verdicts stamped.
   */
  record(rejection: Rejection): Promise<Verdict[]>;
  /** Oldest first. */
  list(): Promise<Verdict[]>;
  /**
   * Deletes the verdicts `predicate` selects and removes the rejections it
   * selects from every session's config; returns the verdicts deleted and
   * how many sessions changed.
   */
  clear(predicate: (verdict: VerdictField) => boolean): Promise<{ verdicts: Verdict[]; sessions: number }>;
}

/** The Responses API's chained responses and named conversations. */
export interface ResponseStorage {
  /** Stores a response, its output items (when retrievable) and a named conversation's new end, as one durable write. */
  save(record: ResponseRecord, items: readonly JsonObject[]): Promise<void>;
  /**
   * What the Responses API reads of what it stored, the parts a query asks
   * for in one call: a retrievable response (with its input items, or with
   * its history and the checkpoint in force on it), a named conversation
   * (with its history and checkpoint), the output items a request's input
   * references (each with the session of the response that produced it).
   */
  get(query: ResponseQuery): Promise<ResponseAnswer>;
  /** Makes a response unretrievable (links later responses need are kept); false when it was not retrievable. */
  delete(id: string): Promise<boolean>;
}

/**
 * Compaction's checkpoints and the turns they archive. A session's are read
 * with SessionStorage.show; the one in force on a response chain comes with
 * the chain's history (ResponseStorage.get).
 */
export interface CheckpointStorage {
  /**
   * Stores a checkpoint, deletes the one it supersedes and marks the
   * summarised turns inactive, as one write; turns keep every carrier byte.
   * The session's row is made when it is gone (`sessions rm`) while its
   * response chain lives on.
   */
  save(checkpoint: NewCheckpoint, archive: CheckpointArchive): Promise<Checkpoint>;
}

/**
 * Access keys (docs/operators.md, "Access keys"). Every gateway on the
 * state keeps them in memory and polls the revision through `list` to
 * learn of a create, revoke or rotate made anywhere (a CLI command,
 * another instance).
 */
export interface KeyStorage {
  /**
   * The revision and the keys, read together: every key, or only those of
   * some secret hashes; none while the revision is the one the caller holds
   * (`unchangedSince`). Cheap when nothing changed: polled several times a
   * second.
   */
  list(query?: KeyQuery): Promise<KeyList>;
  /**
   * Creates, revokes or rotates a key and moves the revision, as one write.
   * A create throws KeyExistsError when a key of that name exists, revoked
   * or not; a revocation or rotation answers false when no live key has
   * that name.
   */
  update(change: KeyChange): Promise<boolean>;
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
  /**
   * Writes `candidate` unless a key of its generation exists already, then
   * answers every key, oldest generation first. The first key is a
   * generation-1 candidate, a rotation's is the newest generation plus one;
   * without a candidate nothing is written (a read: listing the keys, or
   * learning of a rotation made elsewhere, never creates one).
   */
  ensure(candidate?: EnvelopeKey): Promise<EnvelopeKey[]>;
}

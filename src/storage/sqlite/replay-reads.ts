import type { Statement } from "better-sqlite3";
import { CALL_KEY_PREFIX } from "../../conversation/fingerprint.js";
import { TURNS_PER_DEPTH } from "../storage.js";
import type { DepthAsked, DepthMatch, FingerprintMatch, ReplaySource } from "../turns.js";
import type { Db } from "./database.js";
import { MATCHES_PER_FINGERPRINT, type ReplayCache } from "./replay-cache.js";
import { carrierSize, toReplaySource, type ReplayRow } from "../rows.js";
import { storedPromptSql } from "../prompt-heads.js";

/** A stored turn's prompt is the one asked at its depth. */
const SAME_PROMPT = `${storedPromptSql("t")} = json_extract(j.value, '$[1]')`;

/**
 * What replay reads of stored turns: the matches of a request's turn keys
 * and the carriers of the turns they name, from the replay cache when it
 * holds them, else in one query each. `settle` first commits turns made
 * durable but not committed yet, so a read sees every turn.
 */
export class ReplayReads {
  private readonly statements: {
    keyMatchesMany: Statement<[{ fingerprints: string; callKeys: string; keyHash: string }]>; // the two kinds of key as JSON arrays
    replaySources: Statement<[string]>;
    turnsAtDepths: Statement<[{ asked: string; sessionId: string; keyHash: string }]>;
  };

  constructor(
    db: Db,
    private readonly cache: ReplayCache,
    private readonly settle: () => void,
  ) {
    this.statements = {
      // one statement for a whole history: a 1,000-turn resend costs one query, not a thousand;
      // per fingerprint one probe of turns_fingerprint (its entries end with seq, so newest first needs no sort),
      // at most MATCHES_PER_FINGERPRINT (a greeting seen in thousands of sessions must not load them all)
      // both keys in one statement: per key one probe of its index (turns_fingerprint, or the partial
      // turns_call_key that holds tool-call turns only), newest first
      keyMatchesMany: db.prepare(
        `SELECT j.value AS key, t.seq, t.id, t.session_id, t.parent_turn_id FROM json_each(@fingerprints) j CROSS JOIN turns t
           ON t.seq IN (SELECT f.seq FROM turns f WHERE f.key_hash = @keyHash AND f.fingerprint = j.value ORDER BY f.seq DESC LIMIT ${MATCHES_PER_FINGERPRINT})
         UNION ALL
         SELECT j.value AS key, t.seq, t.id, t.session_id, t.parent_turn_id FROM json_each(@callKeys) j CROSS JOIN turns t
           ON t.seq IN (SELECT f.seq FROM turns f WHERE f.key_hash = @keyHash AND f.call_key = j.value ORDER BY f.seq DESC LIMIT ${MATCHES_PER_FINGERPRINT})
         ORDER BY 2 DESC`,
      ),
      replaySources: db.prepare(
        `SELECT id, session_id, plugin, upstream_model, reasoning_text, reasoning_details, native_record FROM turns WHERE id IN (SELECT value FROM json_each(?))`,
      ),
      // per depth two probes, both bounded by the session: the turn at that position when its depth is its position
      // (UNIQUE (session_id, position)), and the newest others of that depth (the partial turns_depth; its entries end
      // with seq, so newest first needs no sort). The key's hash is a condition too; with statistics that made a key
      // look selective SQLite once chose turns_fingerprint (key_hash) and read every turn of the key. So turns_depth is
      // named (INDEXED BY) and the hash is compared as +key_hash, which no index serves
      // @asked is [[depth, prompt], …]; the stored prompt (its head joined back, prompt-heads.ts) is compared here, so only
      // whether it matched comes back
      turnsAtDepths: db.prepare(
        `SELECT json_extract(j.value, '$[0]') AS depth, t.seq, t.id, t.session_id, t.parent_turn_id, ${SAME_PROMPT} AS same_prompt
           FROM json_each(@asked) j CROSS JOIN turns t
             ON t.session_id = @sessionId AND t.position = json_extract(j.value, '$[0]') AND t.depth = t.position AND +t.key_hash = @keyHash
         UNION ALL
         SELECT json_extract(j.value, '$[0]') AS depth, t.seq, t.id, t.session_id, t.parent_turn_id, ${SAME_PROMPT} AS same_prompt
           FROM json_each(@asked) j CROSS JOIN turns t
             ON t.seq IN (SELECT f.seq FROM turns f INDEXED BY turns_depth
                           WHERE f.session_id = @sessionId AND f.depth = json_extract(j.value, '$[0]') AND f.depth <> f.position AND +f.key_hash = @keyHash
                           ORDER BY f.seq DESC LIMIT ${TURNS_PER_DEPTH})
         ORDER BY 2 DESC`,
      ),
    };
  }

  /**
   * Matches for many turn keys at once (fingerprints and call keys, see
   * TurnKeys), most recent first per key: a key seen in several sessions
   * resolves to the most recent. One query for all the misses.
   */
  matchesFor(keyHash: string, keys: readonly string[]): Map<string, FingerprintMatch[]> {
    const found = new Map<string, FingerprintMatch[]>();
    if (keys.length === 0) return found;
    this.cache.validate();
    // every key is usually cached: a Set to drop duplicates is made only for the misses
    let misses: Set<string> | undefined;
    for (const key of keys) {
      const cached = this.cache.matchesFor(keyHash, key);
      if (cached === undefined) (misses ??= new Set()).add(key);
      else if (cached.length > 0) found.set(key, cached);
    }
    if (!misses) return found;
    this.settle();
    const missed = [...misses];
    const read = new Map<string, FingerprintMatch[]>(missed.map((key) => [key, []]));
    const fingerprints = missed.filter((key) => !key.startsWith(CALL_KEY_PREFIX));
    const callKeys = fingerprints.length === missed.length ? [] : missed.filter((key) => key.startsWith(CALL_KEY_PREFIX));
    const rows = this.statements.keyMatchesMany.all({ fingerprints: JSON.stringify(fingerprints), callKeys: JSON.stringify(callKeys), keyHash }) as {
      key: string;
      id: string;
      session_id: string;
      parent_turn_id: string | null;
    }[];
    for (const row of rows) read.get(row.key)?.push({ id: row.id, session_id: row.session_id, parent_turn_id: row.parent_turn_id });
    for (const [key, list] of read) {
      this.cache.rememberMatches(keyHash, key, list); // a miss is remembered too: a new conversation asks again next turn
      if (list.length > 0) found.set(key, list);
    }
    return found;
  }

  /**
   * The carriers of many turns, under the caller's keys (a request's message
   * indexes): from memory when recently replayed, else in one query. Keyed
   * as the caller needs them, so a request builds one map, not one by id
   * and another by index.
   */
  replaySources<K>(turnIds: ReadonlyMap<K, string>): Map<K, ReplaySource> {
    const found = new Map<K, ReplaySource>();
    if (turnIds.size === 0) return found;
    this.cache.validate();
    let misses: string[] | undefined;
    for (const [key, id] of turnIds) {
      const cached = this.cache.sourceFor(id);
      if (cached) found.set(key, cached);
      else (misses ??= []).push(id);
    }
    if (!misses) return found;
    this.settle();
    const read = new Map<string, ReplaySource>();
    for (const row of this.statements.replaySources.all(JSON.stringify(misses)) as ReplayRow[]) {
      const source = toReplaySource(row);
      read.set(row.id, source);
      this.cache.rememberSource(source, carrierSize(row.reasoning_text, row.reasoning_details, row.native_record));
    }
    for (const [key, id] of turnIds) {
      const source = read.get(id);
      if (source) found.set(key, source);
    }
    return found;
  }

  /** The session's turns at these depths, newest first per depth, in one query. */
  turnsAtDepths(keyHash: string, sessionId: string, asked: readonly DepthAsked[]): Map<number, DepthMatch[]> {
    const found = new Map<number, DepthMatch[]>();
    if (asked.length === 0) return found;
    this.settle();
    const pairs = JSON.stringify(asked.map(({ depth, prompt }) => [depth, prompt]));
    const rows = this.statements.turnsAtDepths.all({ asked: pairs, sessionId, keyHash }) as {
      depth: number;
      id: string;
      session_id: string;
      parent_turn_id: string | null;
      same_prompt: number;
    }[];
    for (const row of rows) {
      const match = { id: row.id, session_id: row.session_id, parent_turn_id: row.parent_turn_id, samePrompt: row.same_prompt === 1 };
      const list = found.get(row.depth);
      if (!list) found.set(row.depth, [match]);
      else if (list.length < TURNS_PER_DEPTH) list.push(match);
    }
    return found;
  }
}

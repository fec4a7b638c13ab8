import type { Logger } from "../../foundation/logging/logger.js";
import { keyScope } from "../../turn/sessions/key-scope.js";
import { KEY_SCOPES, type StoredKey } from "../../storage/keys.js";
import type { KeyStorage } from "../../storage/storage.js";
import { OWNER_KEY_NAME, type Caller } from "./caller.js";
import { KeyUsage } from "./key-usage.js";
import { ConnectionDigests } from "./connection-digests.js";
import { secretDigest } from "./secret.js";
import { StoredKeyLookup, type LookupCounts, type LookupLimits } from "./stored-key-lookup.js";

/** A bearer token, judged. A failure says why only to the log and the 401's message; the status is the same. */
export type Identification = { ok: true; caller: Caller } | { ok: false; reason: "missing" | "unknown" | "revoked" | "expired" };

/**
 * How often each gateway asks the store whether keys changed. A revocation
 * made anywhere (a CLI command, another instance) is in force here within
 * one poll plus one reload: well inside the one second docs/operators.md
 * promises.
 */
export const KEY_POLL_MS = 200;
/** How often request counts are added to the store (`keys list`). */
export const USAGE_FLUSH_MS = 1000;

interface Entry {
  readonly key: StoredKey;
  readonly caller: Caller;
}

/**
 * The access keys, in memory on every gateway: a known key is found by one
 * hash (none for a connection's repeated token: ConnectionDigests) and one
 * map lookup, never a store read. A key the ring does not hold
 * is looked up in the store before it is refused (identifyStored), so a key
 * created by another process works on its first request, not after the
 * next poll. The map is looked up by
 * the SHA-256 of the presented token; what a lookup's timing could reveal
 * is at most something about that digest, from which nothing about a
 * secret can be learnt. The owner key is compared in constant time.
 */
export class KeyRing {
  private byHash = new Map<string, Entry>();
  private byName = new Map<string, Entry>();
  private nameByScope = new Map<string, string>();
  private revision: number | undefined;
  private readonly owner: Caller;
  private readonly usage: KeyUsage;
  private readonly listeners = new Set<() => void>();
  private poller: NodeJS.Timeout | undefined;
  private polling = false;
  /** The last poll failed (the store is down): said once, not on every poll. */
  private unreadable = false;
  private readonly pollMs: number;
  private readonly lookup: StoredKeyLookup;
  private readonly digests: ConnectionDigests;

  constructor(
    private readonly keys: KeyStorage,
    ownerKey: string,
    private readonly log: Logger,
    options: { pollMs?: number; flushMs?: number; lookup?: LookupLimits } = {},
  ) {
    const ownerDigest = secretDigest(ownerKey);
    this.digests = new ConnectionDigests(ownerDigest);
    // today's scope of the one key: what the owner key filed before access keys existed stays its own
    this.owner = {
      name: OWNER_KEY_NAME,
      owner: true,
      keyHash: keyScope(ownerKey),
      scopes: new Set(KEY_SCOPES),
      models: [],
      eventsOf: undefined,
      secretHash: ownerDigest.toString("hex"),
    };
    this.usage = new KeyUsage(keys, options.flushMs ?? USAGE_FLUSH_MS, (error) => log.warn({ err: error }, "could not record access key usage"));
    this.pollMs = options.pollMs ?? KEY_POLL_MS;
    this.lookup = new StoredKeyLookup(
      keys,
      (error) => log.warn({ err: error }, "could not look up an access key the gateway does not hold; refused"),
      options.lookup,
    );
  }

  /** Loads the keys and starts polling for changes. */
  async start(): Promise<void> {
    await this.refresh();
    this.poller ??= setInterval(() => void this.poll(), this.pollMs).unref();
  }

  async close(): Promise<void> {
    if (this.poller) clearInterval(this.poller);
    this.poller = undefined;
    await this.usage.close();
  }

  /** Told after every poll (a revocation, a rotation, an expiry may have happened): the event hub closes the connections of keys no longer valid. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * The caller a bearer token stands for, counted as one request when it is
   * valid. `connection` (the request's socket) lets a keep-alive client's
   * repeated token skip its hash (ConnectionDigests); the judgement is the same.
   */
  identify(token: string | undefined, now = Date.now(), connection?: object): Identification {
    if (token === undefined || token === "") return { ok: false, reason: "missing" };
    const presented = this.digests.of(token, connection);
    if (presented.owner) {
      this.usage.note(OWNER_KEY_NAME, now);
      return { ok: true, caller: this.owner };
    }
    const entry = this.byHash.get(presented.hex);
    if (!entry) return { ok: false, reason: "unknown" };
    const invalid = invalidity(entry.key, now);
    if (invalid) return { ok: false, reason: invalid };
    this.usage.note(entry.key.name, now);
    return { ok: true, caller: entry.caller };
  }

  /**
   * As identify, but a token the ring does not know is looked up in the
   * store first: found, the ring reloads (the key's creation moved the
   * revision) and judges it again. Only an unknown token costs a read, and
   * StoredKeyLookup bounds those.
   */
  async identifyStored(token: string | undefined, now = Date.now(), connection?: object): Promise<Identification> {
    const identified = this.identify(token, now, connection);
    if (identified.ok || identified.reason !== "unknown") return identified;
    const found = await this.lookup.find(secretDigest(token!).toString("hex"), now);
    if (!found) return identified;
    try {
      await this.refresh();
    } catch (error) {
      this.log.warn({ err: error }, "could not reload access keys after finding a new one; refused");
      return identified;
    }
    return this.identify(token, now, connection);
  }

  /** Hashes of unknown keys the ring remembers not to ask the store about again (bounded; see StoredKeyLookup). */
  get rememberedUnknown(): number {
    return this.lookup.remembered;
  }

  /** What became of the keys looked up in the store since the start, by outcome (for /metrics). */
  get lookups(): Readonly<LookupCounts> {
    return this.lookup.counts;
  }

  /** The name of the key whose data scope this is (metrics label events by it); undefined for none known. */
  nameOf(keyHash: string): string | undefined {
    return this.nameByScope.get(keyHash);
  }

  /** Whether a caller identified earlier may still act: not revoked, expired or rotated since. */
  stillValid(caller: Caller, now = Date.now()): boolean {
    if (caller.owner) return true;
    const entry = this.byName.get(caller.name);
    return entry !== undefined && entry.key.secretHash === caller.secretHash && invalidity(entry.key, now) === undefined;
  }

  /** Adds the request counts not yet written to the store now (they go at most once a second otherwise). */
  flushUsage(): Promise<void> {
    return this.usage.flush();
  }

  /** Reads the keys again when their revision moved; resolves once they are in force here. */
  async refresh(): Promise<void> {
    const revision = await this.keys.revision();
    if (revision === this.revision) return;
    const keys = await this.keys.list();
    // two reads may overlap (the poll and a new key's lookup): an older revision never replaces a newer one
    if (this.revision !== undefined && revision < this.revision) return;
    this.revision = revision;
    this.load(keys);
  }

  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      await this.refresh();
      if (this.unreadable) this.log.info("access keys readable again");
      this.unreadable = false;
      // told on every poll, not only on a change: an expiry passes without any write
      for (const listener of this.listeners) listener();
    } catch (error) {
      // once per outage, not five times a second
      if (!this.unreadable) this.log.warn({ err: error }, "could not read access keys; the ones loaded stay in force until the store answers");
      this.unreadable = true;
    } finally {
      this.polling = false;
    }
  }

  private load(keys: readonly StoredKey[]): void {
    const scopeOf = new Map(keys.map((key) => [key.name, key.dataScope]));
    const byHash = new Map<string, Entry>();
    const byName = new Map<string, Entry>();
    for (const key of keys) {
      const granted = key.eventsOf.length === 0 ? [key.name] : key.eventsOf;
      const eventsOf = new Set([
        key.dataScope,
        ...granted.flatMap((name) => (name === OWNER_KEY_NAME ? [this.owner.keyHash] : scopeOf.has(name) ? [scopeOf.get(name)!] : [])),
      ]);
      const caller: Caller = {
        name: key.name,
        owner: false,
        keyHash: key.dataScope,
        scopes: new Set(key.scopes),
        models: key.models,
        eventsOf,
        secretHash: key.secretHash,
      };
      const entry = { key, caller };
      byHash.set(key.secretHash, entry);
      byName.set(key.name, entry);
    }
    this.byHash = byHash;
    this.byName = byName;
    this.nameByScope = new Map([[this.owner.keyHash, OWNER_KEY_NAME], ...keys.map((key): [string, string] => [key.dataScope, key.name])]);
  }
}

function invalidity(key: StoredKey, now: number): "revoked" | "expired" | undefined {
  if (key.revokedAt !== null) return "revoked";
  if (key.expiresAt !== null && now >= key.expiresAt) return "expired";
  return undefined;
}

import { createCipheriv, createDecipheriv, createSecretKey, randomFillSync, type KeyObject } from "node:crypto";
import { deflateRawSync, inflateRawSync } from "node:zlib";
import type { Json, JsonObject } from "../../providers/contract.js";
import type { ReplaySource } from "../../storage/turns.js";
import type { EnvelopeKeyRing } from "./envelope-keys.js";
import type { EnvelopeKey } from "../../storage/envelope-keys.js";
import { ENVELOPE_PREFIX, isCarrierEnvelope } from "../../providers/carried/envelope-mark.js";

/**
 * A turn's carriers as an envelope holds them: exactly what replay reads of
 * a stored turn (ReplaySource), plus the provider it came from.
 */
export interface SealedCarriers extends ReplaySource {
  /** The routes.yaml provider id the turn was answered by. */
  readonly provider: string;
}

/** Why an envelope did not open (for the debug line; the caller falls back to the stored turn). */
export type RefusedEnvelope = "not an envelope" | "malformed" | "unknown key" | "forged or not this key's" | "expired";

export type OpenedEnvelope =
  { readonly carriers: SealedCarriers; readonly refused?: undefined } | { readonly carriers?: undefined; readonly refused: RefusedEnvelope };

/** How long an envelope opens after it was sealed: a client resuming later than this gets its stored turn instead. */
export const ENVELOPE_LIFETIME_MS = 30 * 24 * 3600 * 1000;

/** Every envelope starts with this: the format's version, so a later format can be told apart. */
export { ENVELOPE_PREFIX };

const KEY_ID_BYTES = 8;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/**
 * Smaller payloads go as they are: deflate saves nothing worth its cost on a
 * few hundred bytes. Not raised further: a deflated envelope is half the
 * size, and the client resends it with every later request, where each
 * extra byte is read again (docs/performance.md#envelopes-encrypted_content).
 */
const DEFLATE_FROM_BYTES = 512;
/** Nonces are cut from one CSPRNG read of this many (a read per seal cost more than the rest of the nonce's handling). */
const NONCES_PER_READ = 256;
/** zlib's window sizes for raw deflate (2^9 to 2^15 bytes), and the lookahead it keeps out of a window's reach (MIN_LOOKAHEAD: 258 + 3 + 1). */
const MIN_WINDOW_BITS = 9;
const MAX_WINDOW_BITS = 15;
const DEFLATE_LOOKAHEAD = 262;
const PLAIN = 0;
const DEFLATED = 1;
const PLAIN_FLAG = Buffer.of(PLAIN);
const DEFLATED_FLAG = Buffer.of(DEFLATED);
/** Associated data kept per sealing key, by access key scope; past this many scopes the memo starts again. */
const ASSOCIATED_DATA_MEMO = 1024;

/**
 * Envelopes opened lately, by their text: a stateless client resends every
 * envelope of its history with each request, so all but the newest were
 * opened on its previous request. Bounded by count and by characters held.
 */
const OPENED_MAX_ENTRIES = 4096;
const OPENED_MAX_CHARS = 32 * 1024 * 1024;

interface OpenedEntry {
  readonly keyHash: string;
  readonly carriers: SealedCarriers;
  readonly expiresAt: number;
}

export interface EnvelopeOptions {
  readonly lifetimeMs?: number;
  /** The clock, in epoch milliseconds (tests seal envelopes that expired). */
  readonly now?: () => number;
}

/**
 * Seals a turn's carriers into an opaque string a stateless client keeps
 * for us (the Responses API's `encrypted_content`, and any other door that
 * has an opaque field to fill), and opens it when the client sends it back.
 *
 * `cd1.` + base64url(key id ‖ nonce ‖ AES-256-GCM ciphertext ‖ tag). The
 * ciphertext holds one flag byte (deflated or not) and the carriers as
 * JSON, with the turn, session, plugin, provider, upstream model, issue and
 * expiry times. The associated data binds it to the format, the key id and
 * the access key's data scope: an envelope opens only for the key it was
 * issued to, under a key of this deployment, unaltered and unexpired.
 * Carrier values go through JSON unchanged, so what comes out is what the
 * upstream gave, string for string; nothing in them is re-encoded.
 */
export class Envelopes {
  private readonly lifetimeMs: number;
  private readonly now: () => number;
  private readonly opened = new Map<string, OpenedEntry>();
  private openedChars = 0;
  /** Each envelope key as a seal uses it, made once per key (SealingKey). */
  private readonly sealingKeys = new WeakMap<EnvelopeKey, SealingKey>();
  private readonly nonces = Buffer.alloc(NONCES_PER_READ * NONCE_BYTES);
  private noncesUsed = NONCES_PER_READ;

  constructor(
    private readonly keys: EnvelopeKeyRing,
    options: EnvelopeOptions = {},
  ) {
    this.lifetimeMs = options.lifetimeMs ?? ENVELOPE_LIFETIME_MS;
    this.now = options.now ?? Date.now;
  }

  /** The envelope of `carriers`, for the access key whose data scope is `keyHash`. */
  async seal(carriers: SealedCarriers, keyHash: string): Promise<string> {
    const key = await this.keys.sealing();
    const issued = this.now();
    const payload: JsonObject = {
      turn: carriers.id,
      session: carriers.sessionId,
      plugin: carriers.plugin,
      provider: carriers.provider,
      model: carriers.upstreamModel,
      iat: issued,
      exp: issued + this.lifetimeMs,
      text: carriers.reasoningText,
    };
    if (carriers.reasoningDetails) payload.details = carriers.reasoningDetails;
    if (carriers.nativeRecord) payload.native = carriers.nativeRecord;
    const json = Buffer.from(JSON.stringify(payload), "utf8");
    const deflate = json.length >= DEFLATE_FROM_BYTES;
    // the flag byte and the body go through the cipher in one call: each call costs more than copying a few KB
    const flagged = Buffer.concat([deflate ? DEFLATED_FLAG : PLAIN_FLAG, deflate ? deflated(json) : json]);
    const prepared = this.sealingKeyOf(key);
    const nonce = this.nextNonce();
    const cipher = createCipheriv("aes-256-gcm", prepared.secret, nonce);
    cipher.setAAD(prepared.associatedData(keyHash));
    const sealed = Buffer.concat([prepared.id, nonce, cipher.update(flagged), cipher.final(), cipher.getAuthTag()]);
    return ENVELOPE_PREFIX + sealed.toString("base64url");
  }

  /**
   * The carriers `envelope` holds, or undefined when it does not open for
   * `keyHash`: whatever a client sends, this never throws. (A store that
   * does not answer when the keys must be read is the one error it passes on.)
   */
  async open(envelope: unknown, keyHash: string): Promise<SealedCarriers | undefined> {
    return (await this.openWithReason(envelope, keyHash)).carriers;
  }

  /**
   * As `open`, saying why an envelope did not open. An envelope opened
   * before answers from memory, as the same carriers object (so replay's
   * memo of its wire message applies again), after the same checks of key
   * scope and expiry; it was authenticated when it was first opened.
   */
  async openWithReason(envelope: unknown, keyHash: string): Promise<OpenedEnvelope> {
    if (!isEnvelope(envelope)) return { refused: "not an envelope" };
    const known = this.opened.get(envelope);
    if (known && known.keyHash === keyHash) {
      if (known.expiresAt <= this.now()) return { refused: "expired" };
      this.opened.delete(envelope);
      this.opened.set(envelope, known);
      return { carriers: known.carriers };
    }
    const bytes = Buffer.from(envelope.slice(ENVELOPE_PREFIX.length), "base64url");
    if (bytes.length < KEY_ID_BYTES + NONCE_BYTES + 1 + TAG_BYTES) return { refused: "malformed" };
    const keyId = bytes.subarray(0, KEY_ID_BYTES);
    const key = await this.keys.opening(keyId.toString("hex"));
    if (!key) return { refused: "unknown key" };
    let plain: Buffer;
    try {
      const decipher = createDecipheriv("aes-256-gcm", key.secret, bytes.subarray(KEY_ID_BYTES, KEY_ID_BYTES + NONCE_BYTES));
      decipher.setAAD(associatedData(keyId, keyHash));
      decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
      plain = Buffer.concat([decipher.update(bytes.subarray(KEY_ID_BYTES + NONCE_BYTES, bytes.length - TAG_BYTES)), decipher.final()]);
    } catch {
      return { refused: "forged or not this key's" };
    }
    const carriers = carriersOf(plain);
    if (carriers === "malformed") return { refused: "malformed" };
    if (carriers.expiresAt <= this.now()) return { refused: "expired" };
    this.remember(envelope, { keyHash, ...carriers });
    return { carriers: carriers.carriers };
  }

  private sealingKeyOf(key: EnvelopeKey): SealingKey {
    let prepared = this.sealingKeys.get(key);
    if (!prepared) this.sealingKeys.set(key, (prepared = new SealingKey(key)));
    return prepared;
  }

  /**
   * A fresh random nonce: 96 bits from the CSPRNG, as before, read for many
   * seals at once. Each is handed out once, as a view the seal copies
   * before it returns (its bytes are overwritten only by a later read), so
   * no two envelopes share one unless the CSPRNG repeats 96 bits.
   */
  private nextNonce(): Buffer {
    if (this.noncesUsed === NONCES_PER_READ) {
      randomFillSync(this.nonces);
      this.noncesUsed = 0;
    }
    const start = this.noncesUsed++ * NONCE_BYTES;
    return this.nonces.subarray(start, start + NONCE_BYTES);
  }

  private remember(envelope: string, entry: OpenedEntry): void {
    if (envelope.length > OPENED_MAX_CHARS / 64 || this.opened.has(envelope)) return;
    this.opened.set(envelope, entry);
    this.openedChars += envelope.length;
    for (const [oldest] of this.opened) {
      if (this.opened.size <= OPENED_MAX_ENTRIES && this.openedChars <= OPENED_MAX_CHARS) break;
      this.opened.delete(oldest);
      this.openedChars -= oldest.length;
    }
  }
}

/**
 * An envelope key as a seal uses it: its secret imported once as a
 * KeyObject (a raw key was imported again by every seal) and its id's
 * bytes, and the associated data of each access key scope it sealed for,
 * built once: a gateway seals for a handful of keys, over and over.
 */
class SealingKey {
  readonly secret: KeyObject;
  readonly id: Buffer;
  private readonly associated = new Map<string, Buffer>();

  constructor(key: EnvelopeKey) {
    this.secret = createSecretKey(key.secret);
    this.id = Buffer.from(key.id, "hex");
  }

  associatedData(keyHash: string): Buffer {
    let bytes = this.associated.get(keyHash);
    if (!bytes) {
      if (this.associated.size >= ASSOCIATED_DATA_MEMO) this.associated.clear();
      this.associated.set(keyHash, (bytes = associatedData(this.id, keyHash)));
    }
    return bytes;
  }
}

/**
 * `payload` deflated at level 1, in a window just large enough to span it.
 * zlib sets up a window of 2^windowBits bytes (and clears its tables) on
 * every call; a payload of a few hundred bytes to a few KB needs no 32 KiB
 * one. A window that spans the payload and zlib's lookahead reaches every
 * match the default one does, so the bytes are the same as with the default
 * window (envelope-seal.test.ts checks it), and a 1 KB payload deflates in
 * about 3 µs less (docs/performance.md#envelopes-encrypted_content).
 */
export function deflated(payload: Buffer): Buffer {
  const windowBits = Math.min(MAX_WINDOW_BITS, Math.max(MIN_WINDOW_BITS, Math.ceil(Math.log2(payload.length + DEFLATE_LOOKAHEAD))));
  return deflateRawSync(payload, { level: 1, windowBits });
}

/** Whether a value is shaped like an envelope of ours (it may still not open): such a value is never forwarded upstream. */
export const isEnvelope = isCarrierEnvelope;

function associatedData(keyId: Buffer, keyHash: string): Buffer {
  return Buffer.concat([Buffer.from(ENVELOPE_PREFIX, "ascii"), keyId, Buffer.from(keyHash, "utf8")]);
}

/** The authenticated plaintext read back; only our own seal wrote it, so anything else in it is a bug, never a client's doing. */
function carriersOf(plain: Buffer): { carriers: SealedCarriers; expiresAt: number } | "malformed" {
  try {
    const body = plain.subarray(1);
    const json = plain[0] === DEFLATED ? inflateRawSync(body) : body;
    const payload = JSON.parse(json.toString("utf8")) as Record<string, Json | undefined>;
    const text = (name: string) => (typeof payload[name] === "string" ? payload[name] : undefined);
    const [turn, session, plugin, provider, model, reasoning] = ["turn", "session", "plugin", "provider", "model", "text"].map(text);
    if (turn === undefined || session === undefined || plugin === undefined || provider === undefined || model === undefined || reasoning === undefined)
      return "malformed";
    if (typeof payload.exp !== "number") return "malformed";
    const details = Array.isArray(payload.details) ? payload.details : undefined;
    const native = payload.native && typeof payload.native === "object" && !Array.isArray(payload.native) ? payload.native : undefined;
    return {
      carriers: {
        id: turn,
        sessionId: session,
        plugin,
        provider,
        upstreamModel: model,
        reasoningText: reasoning,
        reasoningDetails: details,
        nativeRecord: native,
      },
      expiresAt: payload.exp,
    };
  } catch {
    return "malformed";
  }
}

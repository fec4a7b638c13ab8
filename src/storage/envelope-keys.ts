/**
 * A key that seals and opens encrypted_content envelopes
 * (docs/sessions-and-replay.md, "Envelopes"). Every instance of one
 * deployment reads the same keys from the store, so an envelope one
 * instance sealed opens on any other.
 */
export interface EnvelopeKey {
  /** 1 for the first key, one more for each rotation: the newest generation seals. */
  readonly generation: number;
  /** Random, 8 bytes as 16 hex characters: written into every envelope the key seals. */
  readonly id: string;
  /** 32 random bytes: an AES-256-GCM key. */
  readonly secret: Buffer;
  /** Epoch milliseconds. The next generation's creation is when this key stopped sealing. */
  readonly createdAt: number;
}

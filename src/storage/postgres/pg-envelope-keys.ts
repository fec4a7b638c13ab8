import type { EnvelopeKey } from "../envelope-keys.js";
import type { EnvelopeKeyStorage } from "../storage.js";
import type { Sql } from "./connection.js";
import { run } from "./run.js";

const ALL = `SELECT generation, key_id, encode(secret, 'base64') AS secret, created_at FROM envelope_keys ORDER BY generation`;
const INSERT = `INSERT INTO envelope_keys (generation, key_id, secret, created_at) VALUES ($1, $2, decode($3, 'base64'), $4) ON CONFLICT DO NOTHING`;

interface EnvelopeKeyRow {
  generation: number;
  key_id: string;
  /** base64: the statements pass bytes as text, as every other value of this backend. */
  secret: string;
  /** bigint: node-postgres hands it over as a string. */
  created_at: string;
}

/** Envelope keys in PostgreSQL: a generation already there is kept, so instances adding it together agree on the first row written. */
export class PgEnvelopeKeys implements EnvelopeKeyStorage {
  constructor(private readonly sql: Sql) {}

  /** Two statements, not one: an INSERT's snapshot misses the row another instance committed while it waited on the conflict. */
  async ensure(candidate?: EnvelopeKey): Promise<EnvelopeKey[]> {
    if (candidate) await run(this.sql, INSERT, [candidate.generation, candidate.id, candidate.secret.toString("base64"), candidate.createdAt]);
    return (await run<EnvelopeKeyRow>(this.sql, ALL)).map(keyOf);
  }
}

function keyOf(row: EnvelopeKeyRow): EnvelopeKey {
  // base64 from encode() breaks lines every 76 characters
  return { generation: row.generation, id: row.key_id, secret: Buffer.from(row.secret.replace(/\s/g, ""), "base64"), createdAt: Number(row.created_at) };
}

import type { Statement } from "better-sqlite3";
import type { EnvelopeKey } from "../envelope-keys.js";
import type { EnvelopeKeyStorage } from "../storage.js";
import type { Db } from "./database.js";

interface EnvelopeKeyRow {
  generation: number;
  key_id: string;
  secret: Buffer;
  created_at: number;
}

/** Envelope keys in state.db (envelope-key-migrations.ts): a generation already there is kept, never replaced. */
export class SqliteEnvelopeKeys implements EnvelopeKeyStorage {
  private readonly all: Statement<[]>;
  private readonly insert: Statement<[number, string, Buffer, number]>;

  constructor(db: Db) {
    this.all = db.prepare("SELECT generation, key_id, secret, created_at FROM envelope_keys ORDER BY generation");
    this.insert = db.prepare("INSERT INTO envelope_keys (generation, key_id, secret, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING");
  }

  async ensure(candidate?: EnvelopeKey): Promise<EnvelopeKey[]> {
    if (candidate) this.insert.run(candidate.generation, candidate.id, candidate.secret, candidate.createdAt);
    return (this.all.all() as EnvelopeKeyRow[]).map(keyOf);
  }
}

function keyOf(row: EnvelopeKeyRow): EnvelopeKey {
  return { generation: row.generation, id: row.key_id, secret: Buffer.from(row.secret), createdAt: row.created_at };
}

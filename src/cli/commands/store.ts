import { existsSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { CommandModule } from "yargs";
import { redactStoreUrl, resolveStore } from "../../foundation/config/store-choice.js";
import { copySqliteToPostgres } from "../../storage/migrate/copy-sqlite-to-postgres.js";
import { openPostgresStorage } from "../../storage/postgres/postgres-storage.js";
import { openSqliteStorage } from "../../storage/sqlite/open-sqlite-storage.js";
import { JOURNAL_FILE } from "../../storage/sqlite/turn-journal.js";
import { EnvelopeKeyRing } from "../../routing/carriers/envelope-keys.js";
import { withState, type StateFlags } from "./with-state.js";

interface StoreFlags extends StateFlags {
  from?: string;
  to?: string;
}

export const storeCommand: CommandModule<object, StoreFlags> = {
  command: "store <action>",
  describe: "the state store: move a state.db into PostgreSQL, rotate the envelope key",
  builder: (yargs) =>
    yargs
      .command<StoreFlags>({
        command: "migrate",
        describe: "copy every session, turn, verdict, response and checkpoint of a state.db into an empty PostgreSQL store (stop the gateway first)",
        builder: (y) =>
          y
            .option("from", { type: "string", demandOption: true, describe: "the state.db to copy (refused while the turns journal beside it holds turns)" })
            .option("to", { type: "string", demandOption: true, describe: "postgres:// URL of an empty database (migrated here if new)" }),
        handler: async (flags) => {
          const from = resolve(flags.from!);
          if (!existsSync(from)) throw new Error(`no state.db at ${from}`);
          const target = resolveStore({ store: flags.to });
          if (target.kind !== "postgres") throw new Error("--to must be a postgres:// URL");
          // a turn the gateway answered but had not committed when it stopped is in its journal, and would be left behind
          const journal = join(dirname(from), JOURNAL_FILE);
          if (existsSync(journal) && statSync(journal).size > 0) {
            throw new Error(`${journal} holds turns not yet in ${from}: start the gateway on it once (it commits them first), stop it, then migrate`);
          }
          // every SQLite migration applied first, so the rows read are in today's shape
          const source = openSqliteStorage({ home: dirname(from), file: from });
          try {
            const store = await openPostgresStorage({ url: target.url, poolSize: 1 });
            try {
              const counts = await copySqliteToPostgres(source.db, store.sql);
              console.log(`copied ${from} into ${redactStoreUrl(target.url)}`);
              for (const [table, count] of Object.entries(counts)) console.log(`  ${table.padEnd(24)} ${count}`);
            } finally {
              await store.close();
            }
          } finally {
            await source.close();
          }
        },
      })
      .command<StoreFlags>({
        command: "rotate-envelope-key",
        describe:
          "seal encrypted_content envelopes with a new key from now on; envelopes sealed before keep opening until they expire (every gateway on the store picks the new key up within a minute)",
        handler: (flags) =>
          withState(flags, async (storage) => {
            const ring = new EnvelopeKeyRing(storage.envelopeKeys);
            const key = await ring.rotate();
            console.log(`envelope key ${key.id} (generation ${key.generation}) seals from now on`);
          }),
      })
      .command<StoreFlags>({
        command: "envelope-keys",
        describe: "list the envelope keys (ids and dates, never the secrets), oldest first",
        handler: (flags) =>
          withState(flags, async (storage) => {
            const keys = await storage.envelopeKeys.ensure();
            if (keys.length === 0) console.log("no envelope key yet: the first encrypted_content a gateway seals creates one");
            keys.forEach((key, index) => {
              const replaced = keys[index + 1]?.createdAt;
              const state = replaced === undefined ? "seals" : `opens only; replaced ${new Date(replaced).toISOString()}`;
              console.log(`${String(key.generation).padStart(4)}  ${key.id}  created ${new Date(key.createdAt).toISOString()}  ${state}`);
            });
          }),
      })
      .demandCommand(1),
  handler: () => undefined,
};

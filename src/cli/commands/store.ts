import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { CommandModule } from "yargs";
import { redactStoreUrl, resolveStore } from "../../config/store-choice.js";
import { silentLogger } from "../../logging/logger.js";
import { copySqliteToPostgres } from "../../storage-migrate/copy-sqlite-to-postgres.js";
import { openPostgresStorage } from "../../storage-postgres/postgres-storage.js";
import { openSqliteStorage } from "../../storage-sqlite/open-sqlite-storage.js";

interface StoreFlags {
  from?: string;
  to?: string;
}

export const storeCommand: CommandModule<object, StoreFlags> = {
  command: "store <action>",
  describe: "the state store: move a state.db into PostgreSQL",
  builder: (yargs) =>
    yargs
      .command<StoreFlags>({
        command: "migrate",
        describe: "copy every session, turn, verdict, response and checkpoint of a state.db into an empty PostgreSQL store (stop the gateway first)",
        builder: (y) =>
          y
            .option("from", { type: "string", demandOption: true, describe: "the state.db to copy (its turns journal beside it is committed first)" })
            .option("to", { type: "string", demandOption: true, describe: "postgres:// URL of an empty database (migrated here if new)" }) as never,
        handler: async (flags) => {
          const from = resolve(flags.from!);
          if (!existsSync(from)) throw new Error(`no state.db at ${from}`);
          const target = resolveStore({ store: flags.to });
          if (target.kind !== "postgres") throw new Error("--to must be a postgres:// URL");
          // as the gateway opens it: every SQLite migration applied, what its journal holds committed, so nothing is left behind
          const source = openSqliteStorage({ home: dirname(from), file: from, gateway: { log: silentLogger() } });
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
      .demandCommand(1),
  handler: () => undefined,
};

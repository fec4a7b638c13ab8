import "reflect-metadata";
import yargs, { type Argv } from "yargs";
import { gatewayCommand } from "./commands/gateway.js";
import { keysCommand } from "./commands/keys.js";
import { logsCommand } from "./commands/logs.js";
import { pluginsCommand } from "./commands/plugins.js";
import { routesCommand } from "./commands/routes.js";
import { chatCommand } from "./commands/chat.js";
import { sessionsCommand } from "./commands/sessions.js";
import { verdictsCommand } from "./commands/verdicts.js";
import { storeCommand } from "./commands/store.js";

/**
 * The carrierd CLI (docs/operators.md#flags-and-environment), built but not run. Every subcommand takes
 * --home and --store and honours CARRIERD_HOME and CARRIERD_STORE. The docs
 * tests read its commands and options from here.
 */
export function cli(argv: string[]): Argv {
  return (
    yargs(argv)
      .scriptName("carrierd")
      .usage("$0 <command> [options]")
      .option("home", { type: "string", describe: "state dir (state.db, logs/, api_key); env CARRIERD_HOME, default ~/.carrierd", global: true })
      .option("store", {
        type: "string",
        describe: "where state is kept: sqlite (in --home) or a postgres:// URL; env CARRIERD_STORE, default sqlite",
        global: true,
      })
      .option("store-pool-size", {
        type: "number",
        describe: "PostgreSQL connections this process opens at most; env CARRIERD_STORE_POOL_SIZE, default 4",
        global: true,
      })
      // every command, the gateway included, resolves its store through resolveStore, from the environment when no flag reaches it
      .middleware((argv) => {
        if (typeof argv.store === "string") process.env.CARRIERD_STORE = argv.store;
        if (typeof argv.storePoolSize === "number") process.env.CARRIERD_STORE_POOL_SIZE = String(argv.storePoolSize);
      })
      .command(gatewayCommand)
      .command(routesCommand)
      .command(pluginsCommand)
      .command(logsCommand)
      .command(sessionsCommand)
      .command(verdictsCommand)
      .command(keysCommand)
      .command(chatCommand)
      .command(storeCommand)
      .demandCommand(1, "name a command; see --help")
      .strict()
      .help()
      .alias("h", "help")
      .version(false)
      .wrap(Math.min(110, process.stdout.columns || 100))
      .fail((message, error, instance) => {
        if (error) throw error;
        console.error(`${message}\n`);
        instance.showHelp();
        process.exit(1);
      })
  );
}

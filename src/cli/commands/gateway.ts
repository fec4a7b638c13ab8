import { join } from "node:path";
import { config as loadDotenv } from "dotenv";
import type { CommandModule } from "yargs";
import { ensureApiKey } from "../../config/api-key.js";
import { resolveHome, resolveOptions, type OptionFlags } from "../../config/options.js";
import { startGateway } from "../../gateway/start-gateway.js";
import { isLoopbackHost } from "../../routes/host-match.js";
import { createLogger } from "../../logging/logger.js";

export const gatewayCommand: CommandModule<object, OptionFlags> = {
  command: "gateway",
  describe: "run the daemon",
  builder: (yargs) =>
    yargs
      .option("routes", { type: "string", describe: "route table; env CARRIERD_ROUTES, default ./routes.yaml" })
      .option("host", { type: "string", describe: "bind address; env CARRIERD_HOST, default 127.0.0.1" })
      .option("port", { type: "number", describe: "port, 0 picks a free one; env CARRIERD_PORT, default 8642" })
      .option("cors-origins", { type: "string", describe: "comma-separated CORS allowlist; env CARRIERD_CORS_ORIGINS" })
      .option("plugins", { type: "string", describe: "extra plugin folders, ':'-separated; env CARRIERD_PLUGINS" })
      .option("log-level", { type: "string", describe: "pino level; env CARRIERD_LOG_LEVEL, default info" }) as never,
  handler: async (flags) => {
    // .env in the working directory, then $CARRIERD_HOME/.env; real environment variables win over both.
    loadDotenv({ path: ".env", quiet: true });
    loadDotenv({ path: join(resolveHome(flags.home), ".env"), quiet: true });
    const resolved = resolveOptions(flags);
    const apiKey = ensureApiKey(resolved.home, resolved.apiKey);
    const log = createLogger({ level: resolved.logLevel, logDir: join(resolved.home, "logs"), pretty: process.stdout.isTTY });
    if (apiKey.file) log.info({ file: apiKey.file, generated: apiKey.generated }, apiKey.generated ? `generated an API key in ${apiKey.file}` : `using the API key in ${apiKey.file}`);
    if (!isLoopbackHost(resolved.host)) {
      log.warn({ host: resolved.host }, "binding a non-loopback address: anyone who can reach this port and has the key can use your providers");
    }
    const gateway = await startGateway({ ...resolved, apiKey: apiKey.key }, log);
    // the key's location first: whoever waits for the listening line has both by then
    if (apiKey.file) process.stdout.write(`API key: ${apiKey.file}\n`);
    process.stdout.write(`carrierd listening on ${gateway.url}\n`);
    process.on("SIGHUP", () => void gateway.reloadRoutes());
    const stop = async () => {
      await gateway.close();
      log.flush?.();
      process.exit(0);
    };
    process.once("SIGINT", () => void stop());
    process.once("SIGTERM", () => void stop());
  },
};

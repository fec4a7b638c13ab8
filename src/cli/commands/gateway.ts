import { join } from "node:path";
import type { CommandModule } from "yargs";
import { ensureApiKey } from "../../foundation/config/api-key.js";
import { envFilePaths, resolveOptions, type OptionFlags } from "../../foundation/config/options.js";
import { EnvFiles } from "../../foundation/config/env-files.js";
import { tightenStateHome } from "../../foundation/config/private-state.js";
import { gcAdvice, usableCpus } from "../../gateway/gc-advice.js";
import { describeStore } from "../../foundation/config/store-choice.js";
import { isLoopbackHost } from "../../routing/routes/host-match.js";
import { createLogger, printLine } from "../../foundation/logging/logger.js";

const SHUTDOWN_GRACE_MS = 30_000;
/** Under npm, a signal this soon after the first is the same stop, delivered twice. */
const SAME_STOP_MS = 500;
/** How often the gateway looks whether the npm that started it is still there. */
const PARENT_CHECK_MS = 1000;

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
      .option("log-level", { type: "string", describe: "pino level; env CARRIERD_LOG_LEVEL, default info" })
      .option("body-limit", { type: "string", describe: "request body limit, bytes or e.g. 20MiB; env CARRIERD_BODY_LIMIT, default 10MiB" })
      .option("events", {
        type: "string",
        describe: "live events: local, or a redis:// URL shared by every instance; env CARRIERD_EVENTS, default local",
      }),
  handler: async (flags) => {
    // the daemon itself (its HTTP server, stores, providers, tracing) loads only when it is started: every other command,
    // and --help, is spared reading it, about a second of CPU per invocation
    const [{ startGateway }, { PortInUseError }, { StoreUnreachableError }] = await Promise.all([
      import("../../gateway/start-gateway.js"),
      import("../../http/http-server.js"),
      import("../../storage/open/open-storage.js"),
    ]);
    // .env in the working directory, then $CARRIERD_HOME/.env; real environment variables win over both.
    // Read again on every save while the gateway runs (startGateway watches them).
    const envFiles = new EnvFiles(envFilePaths(flags.home));
    let envProblem: unknown;
    try {
      envFiles.load();
    } catch (error) {
      envProblem = error;
    }
    const resolved = resolveOptions(flags);
    // everything the daemon creates (state.db and its -wal/-shm, the journal, logs) is its owner's alone
    process.umask(0o077);
    const loose = tightenStateHome(resolved.home);
    const apiKey = ensureApiKey(resolved.home, resolved.apiKey);
    const log = createLogger({ level: resolved.logLevel, logDir: join(resolved.home, "logs"), pretty: process.stdout.isTTY });
    if (envProblem) log.warn({ err: envProblem, files: envFiles.paths }, "a .env file could not be read; carrierd starts without it");
    if (loose.tightened.length > 0)
      log.warn({ files: loose.tightened }, `made private (0700/0600), as other users could read them: ${loose.tightened.join(", ")}`);
    for (const problem of loose.problems) log.warn({ home: resolved.home }, `WARNING: stored reasoning or keys may be readable by other users: ${problem}`);
    if (apiKey.file)
      log.info(
        { file: apiKey.file, generated: apiKey.generated },
        apiKey.generated ? `generated an API key in ${apiKey.file}` : `using the API key in ${apiKey.file}`,
      );
    if (apiKey.tightened) log.warn({ file: apiKey.file }, "the API key file was readable by other users; it is now mode 0600");
    if (!isLoopbackHost(resolved.host)) {
      log.warn({ host: resolved.host }, "binding a non-loopback address: anyone who can reach this port and has the key can use your providers");
    }
    const advice = gcAdvice(usableCpus(), process.execArgv, process.argv[1] ?? "bin/carrierd");
    if (advice) log.info({ cpus: 1 }, advice);
    if (resolved.store?.kind === "postgres")
      log.info({ store: describeStore(resolved.store), pool_size: resolved.store.poolSize }, `state is kept in PostgreSQL at ${describeStore(resolved.store)}`);
    let gateway: Awaited<ReturnType<typeof startGateway>>;
    try {
      gateway = await startGateway({ ...resolved, apiKey: apiKey.key }, log, envFiles);
    } catch (error) {
      if (!(error instanceof PortInUseError) && !(error instanceof StoreUnreachableError)) throw error;
      // one clear line, not a stack trace: the operator's next step is in it
      log.error({ host: resolved.host, port: resolved.port, store: describeStore(resolved.store ?? { kind: "sqlite" }) }, error.message);
      console.error(`carrierd: ${error.message}`);
      process.exit(1);
    }
    process.on("SIGHUP", () => void gateway.reloadRoutes());
    // First signal: stop accepting, let open streams finish (SSE answers can run for minutes), then exit 0.
    // A second signal, or the grace period running out, exits at once: an operator's Ctrl-C twice is final.
    // Started by an npm script (`npm start`), the gateway is npm's child: a terminal's Ctrl-C reaches npm and the gateway
    // both, and npm passes its own on; a service manager may signal every process of the unit, npm too.
    const npmChild = process.env.npm_lifecycle_event !== undefined;
    let stoppingSince: number | undefined;
    const stop = (signal: NodeJS.Signals, reason = "stopping") => {
      if (stoppingSince !== undefined) {
        // the same stop delivered twice, not a second one
        if (npmChild && performance.now() - stoppingSince < SAME_STOP_MS) return;
        log.warn({ signal }, "stopping now, without waiting for open requests");
        process.exit(signal === "SIGINT" ? 130 : 143);
      }
      stoppingSince = performance.now();
      log.info({ signal, grace_seconds: SHUTDOWN_GRACE_MS / 1000 }, `${reason}: finishing open requests (signal again to stop at once)`);
      setTimeout(() => {
        log.warn({}, "open requests did not finish in time; stopping");
        process.exit(1);
      }, SHUTDOWN_GRACE_MS).unref();
      void gateway.close().then(() => process.exit(0));
    };
    // (a signal's listener is called with its number too: not a reason)
    process.on("SIGINT", () => stop("SIGINT"));
    process.on("SIGTERM", () => stop("SIGTERM"));
    // If npm is killed outright it passes no signal on, and the gateway would run on, orphaned, holding its port.
    if (npmChild) whenParentExits(() => stop("SIGTERM", "npm, which started carrierd, exited; stopping"));
    // the key's location first: whoever waits for the listening line has both by then, and
    // the signal handlers are in place (a supervisor that stops it at once gets a clean stop)
    if (apiKey.file) printLine(`API key: ${apiKey.file}`, { file: apiKey.file });
    printLine(`carrierd listening on ${gateway.url}`, { url: gateway.url });
  },
};

/** Calls `exited` once this process's parent is gone (the process is then re-parented, and its parent id changes). */
function whenParentExits(exited: () => void): void {
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    exited();
  }, PARENT_CHECK_MS);
  timer.unref();
}

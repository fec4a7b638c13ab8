import { homedir } from "node:os";
import { join, resolve } from "node:path";

/** Everything the gateway is configured with (SPEC §2), resolved from flags, then env, then defaults. */
export interface GatewayOptions {
  readonly home: string;
  readonly routesPath: string;
  readonly host: string;
  readonly port: number;
  /** The bearer key clients must send; resolved by `ensureApiKey` when unset. */
  readonly apiKey: string;
  readonly corsOrigins: readonly string[];
  readonly pluginDirs: readonly string[];
  readonly logLevel: string;
  /** Request body limit in bytes (SPEC §12.12: 10 MiB). */
  readonly bodyLimit: number;
  /** Seconds of upstream silence before an SSE `: keepalive` comment. */
  readonly keepaliveSeconds: number;
  /** Environment the provider secrets are read from. */
  readonly env: Readonly<Record<string, string | undefined>>;
}

export interface OptionFlags {
  home?: string;
  routes?: string;
  host?: string;
  port?: number;
  corsOrigins?: string;
  plugins?: string;
  logLevel?: string;
}

export const DEFAULT_PORT = 8642;
export const DEFAULT_BODY_LIMIT = 10 * 1024 * 1024;

export function resolveHome(flag: string | undefined, env: Record<string, string | undefined> = process.env): string {
  return resolve(flag ?? env.CARRIERD_HOME ?? join(homedir(), ".carrierd"));
}

export function resolveOptions(flags: OptionFlags, env: Record<string, string | undefined> = process.env): Omit<GatewayOptions, "apiKey"> & { apiKey: string | undefined } {
  const port = flags.port ?? (env.CARRIERD_PORT ? Number(env.CARRIERD_PORT) : DEFAULT_PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid port: ${String(flags.port ?? env.CARRIERD_PORT)}`);
  return {
    home: resolveHome(flags.home, env),
    routesPath: resolve(flags.routes ?? env.CARRIERD_ROUTES ?? "routes.yaml"),
    host: flags.host ?? env.CARRIERD_HOST ?? "127.0.0.1",
    port,
    apiKey: env.CARRIERD_API_KEY || undefined,
    corsOrigins: splitList(flags.corsOrigins ?? env.CARRIERD_CORS_ORIGINS, ","),
    pluginDirs: splitList(flags.plugins ?? env.CARRIERD_PLUGINS, ":").map((dir) => resolve(dir)),
    logLevel: flags.logLevel ?? env.CARRIERD_LOG_LEVEL ?? "info",
    bodyLimit: DEFAULT_BODY_LIMIT,
    keepaliveSeconds: 10,
    env,
  };
}

function splitList(value: string | undefined, separator: string): string[] {
  return (value ?? "").split(separator).map((item) => item.trim()).filter(Boolean);
}

import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { parseEventsSetting, type EventsSetting } from "./events-setting.js";
import { resolveStore, type StoreChoice, type StoreFlags } from "./store-choice.js";

/** Everything the gateway is configured with (docs/operators.md#flags-and-environment), resolved from flags, then env, then defaults. */
export interface GatewayOptions {
  readonly home: string;
  /** Where the state is kept (`--store` / CARRIERD_STORE): SQLite in `home` when unset. */
  readonly store?: StoreChoice;
  readonly routesPath: string;
  readonly host: string;
  readonly port: number;
  /** The bearer key clients must send; resolved by `ensureApiKey` when unset. */
  readonly apiKey: string;
  readonly corsOrigins: readonly string[];
  readonly pluginDirs: readonly string[];
  readonly logLevel: string;
  /** Request body limit in bytes (default 10 MiB: docs/operators.md#limits). */
  readonly bodyLimit: number;
  /** Seconds of upstream silence before an SSE `: keepalive` comment. */
  readonly keepaliveSeconds: number;
  /** How often the background worker checkpoints the WAL (default 1000 ms; env CARRIERD_WAL_CHECKPOINT_MS). */
  readonly walCheckpointMs?: number;
  /** WAL size past which that checkpoint also truncates it, and SQLite's journal_size_limit (default 8 MiB; env CARRIERD_WAL_LIMIT). */
  readonly walLimitBytes?: number;
  /** Bytes a stream may hold for a slow client before the upstream is no longer read (CARRIERD_STREAM_BUFFER; default 1 MiB). */
  readonly streamBufferBytes?: number;
  /** Seconds a streaming client may take nothing before it is cut off and its upstream aborted (CARRIERD_CLIENT_STALL_SECONDS; default 30). */
  readonly clientStallSeconds?: number;
  /** Where live events go: the in-process bus, or a Redis stream shared by every instance (`--events`, CARRIERD_EVENTS; default local). */
  readonly events?: EventsSetting;
  /** Environment the provider secrets are read from. */
  readonly env: Readonly<Record<string, string | undefined>>;
}

export interface OptionFlags extends StoreFlags {
  home?: string;
  routes?: string;
  host?: string;
  port?: number;
  corsOrigins?: string;
  plugins?: string;
  logLevel?: string;
  /** Request body limit: bytes, or with a KiB/MiB suffix. */
  bodyLimit?: string;
  /** `local` or a Redis URL. */
  events?: string;
}

export const DEFAULT_PORT = 8642;
export const DEFAULT_BODY_LIMIT = 10 * 1024 * 1024;

/** The .env files carrierd reads, the first winning: ./.env (the working directory), then $CARRIERD_HOME/.env. */
export function envFilePaths(homeFlag: string | undefined, env: Record<string, string | undefined> = process.env): string[] {
  return [".env", join(resolveHome(homeFlag, env), ".env")];
}

export function resolveHome(flag: string | undefined, env: Record<string, string | undefined> = process.env): string {
  return resolve(flag ?? env.CARRIERD_HOME ?? join(homedir(), ".carrierd"));
}

export function resolveOptions(
  flags: OptionFlags,
  env: Record<string, string | undefined> = process.env,
): Omit<GatewayOptions, "apiKey"> & { apiKey: string | undefined } {
  const port = flags.port ?? (env.CARRIERD_PORT ? Number(env.CARRIERD_PORT) : DEFAULT_PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid port: ${String(flags.port ?? env.CARRIERD_PORT)}`);
  return {
    home: resolveHome(flags.home, env),
    store: resolveStore(flags, env),
    routesPath: resolve(flags.routes ?? env.CARRIERD_ROUTES ?? "routes.yaml"),
    host: flags.host ?? env.CARRIERD_HOST ?? "127.0.0.1",
    port,
    apiKey: env.CARRIERD_API_KEY || undefined,
    corsOrigins: splitList(flags.corsOrigins ?? env.CARRIERD_CORS_ORIGINS, ","),
    pluginDirs: splitList(flags.plugins ?? env.CARRIERD_PLUGINS, ":").map((dir) => resolve(dir)),
    logLevel: flags.logLevel ?? env.CARRIERD_LOG_LEVEL ?? "info",
    bodyLimit: parseSize(flags.bodyLimit ?? env.CARRIERD_BODY_LIMIT) ?? DEFAULT_BODY_LIMIT,
    keepaliveSeconds: 10,
    walCheckpointMs: positiveInteger(env.CARRIERD_WAL_CHECKPOINT_MS, "CARRIERD_WAL_CHECKPOINT_MS"),
    walLimitBytes: parseSize(env.CARRIERD_WAL_LIMIT, "CARRIERD_WAL_LIMIT"),
    streamBufferBytes: parseSize(env.CARRIERD_STREAM_BUFFER, "CARRIERD_STREAM_BUFFER"),
    clientStallSeconds: positiveSeconds(env.CARRIERD_CLIENT_STALL_SECONDS, "CARRIERD_CLIENT_STALL_SECONDS"),
    events: parseEventsSetting(flags.events ?? env.CARRIERD_EVENTS, env),
    env,
  };
}

/** `10485760`, `10MiB`, `512KiB`, `10M`, `512k` (binary units: a limit is about memory). */
export function parseSize(value: string | undefined, what = "body limit"): number | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  const match = /^\s*(\d+)\s*(b|k|kib|kb|m|mib|mb)?\s*$/i.exec(value);
  const size = match
    ? Number(match[1]) * ({ k: 1024, kib: 1024, kb: 1024, m: 1024 ** 2, mib: 1024 ** 2, mb: 1024 ** 2 }[match[2]?.toLowerCase() ?? ""] ?? 1)
    : NaN;
  if (!Number.isSafeInteger(size) || size < 1) throw new Error(`invalid ${what}: ${value} (bytes, or a number with KiB/MiB)`);
  return size;
}

function positiveInteger(value: string | undefined, name: string): number | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  const number = Number(value);
  if (!Number.isSafeInteger(number) || number < 1) throw new Error(`invalid ${name}: ${value} (a whole number of milliseconds)`);
  return number;
}

function positiveSeconds(value: string | undefined, name: string): number | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds <= 0) throw new Error(`invalid ${name}: ${value} (seconds, above 0)`);
  return seconds;
}

function splitList(value: string | undefined, separator: string): string[] {
  return (value ?? "")
    .split(separator)
    .map((item) => item.trim())
    .filter(Boolean);
}

import { mkdirSync } from "node:fs";
import { join } from "node:path";
import pino, { type Logger } from "pino";

export type { Logger };

/** Secrets never reach a log line: keys, bearer headers, and anything named like a key. */
const REDACT = [
  "apiKey",
  "api_key",
  "key",
  "authorization",
  "Authorization",
  "*.apiKey",
  "*.api_key",
  "*.authorization",
  "*.Authorization",
  "headers.authorization",
  "headers.x-api-key",
  "headers.x-goog-api-key",
  "*.headers.authorization",
  "*.headers.x-api-key",
];

export interface LoggerOptions {
  level: string;
  /** `$CARRIERD_HOME/logs`; undefined logs to stdout only. */
  logDir?: string;
  /** Pretty-print to stdout (a TTY); JSON otherwise. */
  pretty?: boolean;
  /** Also write to stdout (the gateway does; one-shot CLI commands don't). */
  stdout?: boolean;
}

/** JSON lines to `$CARRIERD_HOME/logs/carrierd.log`, and stdout (pretty on a TTY). */
export function createLogger(options: LoggerOptions): Logger {
  const targets: pino.TransportTargetOptions[] = [];
  if (options.logDir) {
    mkdirSync(options.logDir, { recursive: true, mode: 0o700 });
    targets.push({ target: "pino/file", level: options.level, options: { destination: join(options.logDir, "carrierd.log"), mkdir: true } });
  }
  if (options.stdout !== false) {
    targets.push(
      options.pretty
        ? { target: "pino-pretty", level: options.level, options: { destination: 1, colorize: true, ignore: "pid,hostname" } }
        : { target: "pino/file", level: options.level, options: { destination: 1 } },
    );
  }
  if (targets.length === 0 || options.level === "silent") return silentLogger();
  return pino({ level: options.level, redact: { paths: REDACT, censor: "[redacted]" }, base: { pid: process.pid } }, pino.transport({ targets }));
}

/** A logger that writes nowhere, for tests and one-shot commands. */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}

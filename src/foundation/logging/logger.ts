import { mkdirSync } from "node:fs";
import { join } from "node:path";
import pino, { type Logger } from "pino";
import { redact } from "./redact.js";

export type { Logger };

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
    targets.push({ target: "pino/file", level: options.level, options: { destination: join(options.logDir, "carrierd.log"), mkdir: true, mode: 0o600 } });
  }
  if (options.stdout !== false) {
    targets.push(
      options.pretty
        ? { target: "pino-pretty", level: options.level, options: { destination: 1, colorize: true, ignore: "pid,hostname" } }
        : { target: "pino/file", level: options.level, options: { destination: 1 } },
    );
  }
  if (targets.length === 0 || options.level === "silent") return silentLogger();
  return pino(
    {
      level: options.level,
      base: { pid: process.pid },
      // every logged object and message is scrubbed of keys and bearer tokens, however deeply nested
      formatters: { log: (object) => redact(object) },
      hooks: { logMethod: scrubMessage },
    },
    pino.transport({ targets }),
  );
}

/** A message string can carry a secret too ("calling with Bearer …"). */
function scrubMessage(this: Logger, args: Parameters<pino.LogFn>, method: pino.LogFn): void {
  method.apply(this, args.map((arg) => (typeof arg === "string" ? redact(arg) : arg)) as Parameters<pino.LogFn>);
}

/**
 * A line the gateway itself prints to stdout (where its API key is, that it
 * is listening). On a terminal it is the plain sentence; when stdout is a
 * pipe or a file every line there is JSON, so this one is a JSON record in
 * pino's own shape whose `msg` is the same sentence (a script waiting for
 * "carrierd listening on http://…" still finds it). Written synchronously:
 * the listening line must be out before anything connects.
 */
export function printLine(message: string, fields: Record<string, unknown> = {}, tty = process.stdout.isTTY === true): void {
  const line = tty ? message : JSON.stringify({ level: 30, time: Date.now(), pid: process.pid, ...fields, msg: message });
  process.stdout.write(`${line}\n`);
}

/** A logger that writes nowhere, for tests and one-shot commands. */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}

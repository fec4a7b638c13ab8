import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type { Logger } from "../../foundation/logging/logger.js";
import { ListDeadlineError } from "../sessions.js";
import type { Db } from "./database.js";

/**
 * The SQL function a session list checks its deadline with, once per session
 * it considers: past `deadline` (ms since the epoch; NULL for none) it throws,
 * which stops the statement where it is. Registered on every connection that
 * runs the list.
 */
export const IN_TIME = "carrierd_in_time";
const PAST_DEADLINE = "carrierd: past the list's deadline";

export function registerInTime(db: Db): void {
  db.function(IN_TIME, { deterministic: false }, (deadline: unknown) => {
    if (typeof deadline === "number" && Date.now() > deadline) throw new Error(PAST_DEADLINE);
    return 1;
  });
}

/** Whether an error is the one registerInTime throws. */
export function isPastDeadline(error: unknown): boolean {
  return error instanceof Error && error.message.includes(PAST_DEADLINE);
}

interface Pending {
  resolve: (rows: unknown[]) => void;
  reject: (error: Error) => void;
}

/**
 * Session lists (`GET /v1/sessions`, searched or not) off the gateway's
 * thread: a worker with its own read-only connection to state.db runs the
 * list statement, one list at a time, so a search over thousands of turns
 * costs the requests of other keys nothing on the event loop (WAL readers
 * never block the gateway's writer). The worker's thread runs at the lowest
 * CPU priority (nice 19; on Linux a thread's own), so on a busy machine the
 * search waits for the CPU, not the gateway's requests. The caller commits what it holds first
 * (SessionStore.list's settle), so the worker reads every turn answered
 * before the list was asked. If the worker fails, `list` answers undefined
 * and the caller runs the statement itself.
 */
export class ListReader {
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private failed = false;
  private stopped = false;

  constructor(file: string, sql: string, log: Logger) {
    const driver = createRequire(import.meta.url).resolve("better-sqlite3");
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { driver, file, sql, inTime: IN_TIME, pastDeadline: PAST_DEADLINE } });
    this.worker.unref();
    this.worker.on("message", (message: { id: number; rows?: unknown[]; error?: string; pastDeadline?: boolean }) => {
      const waiting = this.pending.get(message.id);
      if (!waiting) return;
      this.pending.delete(message.id);
      if (message.rows) waiting.resolve(message.rows);
      else waiting.reject(message.pastDeadline ? new ListDeadlineError() : new Error(message.error ?? "the list reader failed"));
    });
    const fail = (reason: string) => {
      if (this.stopped) return;
      this.failed = true;
      log.warn({ reason }, "the session list reader stopped; lists run on the gateway's thread");
      for (const waiting of this.pending.values()) waiting.reject(new Error(`the session list reader stopped: ${reason}`));
      this.pending.clear();
    };
    this.worker.on("error", (error) => fail(error.message));
    this.worker.on("exit", (code) => fail(`worker exited with ${code}`));
  }

  /** The list statement's rows for these parameters, read in the worker; undefined when the worker is gone. */
  list(params: Record<string, unknown>): Promise<unknown[]> | undefined {
    if (this.failed || this.stopped) return undefined;
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.ref();
      this.worker.postMessage({ id, params });
    }).finally(() => {
      if (this.pending.size === 0) this.worker.unref();
    }) as Promise<unknown[]>;
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await this.worker.terminate();
  }
}

// CommonJS, evaluated in the worker: it needs only the driver the gateway already loaded.
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
// on Linux a thread's nice value is its own: this thread yields the CPU to the gateway's whenever both want it
try { require("node:os").setPriority(19); } catch {}
const Database = require(workerData.driver);
const db = new Database(workerData.file, { readonly: true, fileMustExist: true });
db.pragma("busy_timeout = 5000");
db.function(workerData.inTime, { deterministic: false }, (deadline) => {
  if (typeof deadline === "number" && Date.now() > deadline) throw new Error(workerData.pastDeadline);
  return 1;
});
const list = db.prepare(workerData.sql);
parentPort.on("message", ({ id, params }) => {
  try {
    parentPort.postMessage({ id, rows: list.all(params) });
  } catch (error) {
    const message = String(error && error.message);
    parentPort.postMessage({ id, error: message, pastDeadline: message.includes(workerData.pastDeadline) });
  }
});
`;

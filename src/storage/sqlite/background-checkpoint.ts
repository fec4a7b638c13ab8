import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type { Logger } from "../../foundation/logging/logger.js";
import { ANALYSIS_LIMIT, type Db } from "./database.js";

/** Default checkpoint interval. */
export const WAL_CHECKPOINT_MS = 1000;
/** Default WAL size past which a checkpoint truncates it; also the connection's journal_size_limit. */
export const WAL_LIMIT_BYTES = 8 * 1024 * 1024;

/** How often the worker refreshes the planner's statistics (PRAGMA optimize, see keepStatistics). */
export const OPTIMIZE_MS = 60 * 60 * 1000;

/** How long a TRUNCATE checkpoint waits for the writer's lock and for readers before it gives up until the next interval. */
const TRUNCATE_WAIT_MS = 50;

export interface CheckpointOptions {
  intervalMs?: number;
  walLimitBytes?: number;
  /** How often the planner's statistics are refreshed (OPTIMIZE_MS unless a test wants it sooner). */
  optimizeMs?: number;
}

/**
 * Moves WAL checkpoints off the request path, and keeps the WAL bounded.
 * With SQLite's default auto-checkpoint, the commit that crosses 1,000 WAL
 * pages copies them into the database (with an fsync) on the event loop,
 * stalling every request in flight. Here the gateway's connection never
 * checkpoints; a worker thread with its own connection does, every
 * `intervalMs`:
 *
 * - a PASSIVE checkpoint copies what it can into state.db without taking
 *   any lock a request waits on;
 * - when the WAL file has grown past `walLimitBytes`, a TRUNCATE checkpoint
 *   follows. Under sustained writes a PASSIVE checkpoint never catches up
 *   with the writer, so SQLite never gets to start the WAL over, and the
 *   file grows without end (gigabytes a minute under load). TRUNCATE takes
 *   the writer's lock, copies the few frames written since the PASSIVE
 *   pass and empties the file; a commit meanwhile waits those milliseconds
 *   in busy_timeout. It gives up after TRUNCATE_WAIT_MS (a reader holding
 *   an old snapshot) rather than hold commits back, and is tried again at
 *   the next interval. So the WAL stays under the limit plus what one
 *   interval writes, unless a reader keeps a snapshot open for that long.
 *
 * `journal_size_limit` is set to the same limit on the gateway's connection,
 * so a WAL that SQLite restarts is cut back to it too. If the worker fails,
 * the gateway's connection checkpoints itself again as SQLite would by
 * default (and the WAL stays bounded by journal_size_limit once those
 * checkpoints catch up).
 *
 * The same worker runs `PRAGMA optimize` every OPTIMIZE_MS (each ANALYZE
 * sampled, ANALYSIS_LIMIT rows per index), so the statistics follow a store
 * that grows for weeks without a restart, off the event loop.
 */
export class BackgroundCheckpoint {
  private readonly worker: Worker;
  private stopped = false;

  constructor(
    db: Db,
    file: string,
    log: Logger,
    { intervalMs = WAL_CHECKPOINT_MS, walLimitBytes = WAL_LIMIT_BYTES, optimizeMs = OPTIMIZE_MS }: CheckpointOptions = {},
  ) {
    db.pragma("wal_autocheckpoint = 0");
    db.pragma(`journal_size_limit = ${Math.floor(walLimitBytes)}`);
    const driver = createRequire(import.meta.url).resolve("better-sqlite3");
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { driver, file, intervalMs, walLimitBytes, optimizeMs } });
    this.worker.unref();
    const fallBack = (reason: string) => {
      if (this.stopped) return;
      log.warn({ reason }, "background WAL checkpoints stopped; the gateway's connection checkpoints itself again");
      if (db.open) db.pragma("wal_autocheckpoint = 1000");
    };
    this.worker.on("error", (error) => fallBack(error.message));
    this.worker.on("exit", (code) => fallBack(`worker exited with ${code}`));
  }

  /** A last checkpoint, then the worker ends. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    const exited = new Promise<void>((resolve) => this.worker.once("exit", () => resolve()));
    this.worker.postMessage("stop");
    await exited;
  }
}

// CommonJS, evaluated in the worker: it needs only the driver the gateway already loaded.
const WORKER_SOURCE = `
const { statSync } = require("node:fs");
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma("busy_timeout = 5000");
db.pragma("journal_size_limit = " + Math.floor(workerData.walLimitBytes));
const checkpoint = (mode) => { try { db.pragma("wal_checkpoint(" + mode + ")"); } catch {} };
const walBytes = () => { try { return statSync(workerData.file + "-wal").size; } catch { return 0; } };
// TRUNCATE holds the writer's lock while it waits for readers of the old WAL (a CLI command mid-read): it gives
// up after TRUNCATE_WAIT_MS, so a gateway commit never waits longer than that, and the next tick tries again
const tick = () => {
  checkpoint("PASSIVE");
  if (walBytes() <= workerData.walLimitBytes) return;
  db.pragma("busy_timeout = ${TRUNCATE_WAIT_MS}");
  checkpoint("TRUNCATE");
  db.pragma("busy_timeout = 5000");
};
const timer = setInterval(tick, workerData.intervalMs);
db.pragma("analysis_limit = ${ANALYSIS_LIMIT}");
const optimizer = setInterval(() => { try { db.pragma("optimize"); } catch {} }, workerData.optimizeMs);
parentPort.on("message", (message) => {
  if (message !== "stop") return;
  clearInterval(timer);
  clearInterval(optimizer);
  checkpoint("PASSIVE");
  db.close();
  parentPort.close();
});
`;

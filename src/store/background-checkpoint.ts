import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type { Logger } from "../logging/logger.js";
import type { Db } from "./database.js";

/**
 * Moves WAL checkpoints off the request path. With SQLite's default
 * auto-checkpoint, the commit that crosses 1,000 WAL pages copies them into
 * the database (with an fsync) on the event loop, stalling every request in
 * flight. Here the gateway's connection never checkpoints; a worker thread
 * with its own connection runs PASSIVE checkpoints, which proceed alongside
 * the writer. If the worker fails, the gateway's connection checkpoints
 * again as SQLite would by default, so the WAL never grows without bound.
 */
export class BackgroundCheckpoint {
  private readonly worker: Worker;
  private stopped = false;

  constructor(db: Db, file: string, log: Logger, intervalMs = 1000) {
    db.pragma("wal_autocheckpoint = 0");
    const driver = createRequire(import.meta.url).resolve("better-sqlite3");
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { driver, file, intervalMs } });
    this.worker.unref();
    const fallBack = (reason: string) => {
      if (this.stopped) return;
      log.warn({ reason }, "background WAL checkpoints stopped; the gateway's connection checkpoints itself again");
      if (db.open) db.pragma("wal_autocheckpoint = 1000");
    };
    this.worker.on("error", (error) => fallBack(error.message));
    this.worker.on("exit", (code) => fallBack(`worker exited with ${code}`));
  }

  /** A last full checkpoint, then the worker ends. */
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
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma("busy_timeout = 5000");
const checkpoint = (mode) => { try { db.pragma("wal_checkpoint(" + mode + ")"); } catch {} };
const timer = setInterval(() => checkpoint("PASSIVE"), workerData.intervalMs);
parentPort.on("message", (message) => {
  if (message !== "stop") return;
  clearInterval(timer);
  checkpoint("PASSIVE");
  db.close();
  parentPort.close();
});
`;

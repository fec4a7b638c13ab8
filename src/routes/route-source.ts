import { readFile } from "node:fs/promises";
import { setTimeout as delay } from "node:timers/promises";
import { basename, dirname, resolve } from "node:path";
import { watch, type FSWatcher } from "chokidar";
import type { EventBus } from "../events/event-bus.js";
import type { Logger } from "../logging/logger.js";
import { formatProblem, parseRoutes, revisionOf, type RouteProblem } from "./load-routes.js";
import type { RouteTable } from "./route-table.js";

/** Read once the folder has been quiet this long: most saves are several events. */
const QUIET_MS = 40;
/** And once more after this, for a change chokidar dropped (it drops one within 50 ms of the last). */
const TRAILING_MS = 150;
/** A file that does not parse is looked at again this much later, up to SETTLE_LOOKS times, before it is rejected. */
const SETTLE_MS = 100;
const SETTLE_LOOKS = 2;

export type ReloadListener = (next: RouteTable, previous: RouteTable) => void;

/**
 * Holds the route table in force: one reference, swapped whole. A request
 * reads `current` once and keeps that table to its end. A file that fails
 * to parse or validate is rejected whole and the last good table stays.
 */
export class RouteSource {
  private table: RouteTable;
  private watcher: FSWatcher | undefined;
  private readonly listeners = new Set<ReloadListener>();
  private reloading: Promise<void> = Promise.resolve();
  /** Content hash of the last text parsed, good or bad: a file event that changed nothing is ignored. */
  private lastSeen: string;
  private quietTimer: NodeJS.Timeout | undefined;
  private trailingTimer: NodeJS.Timeout | undefined;

  constructor(
    initial: RouteTable,
    private readonly knownPlugins: ReadonlySet<string>,
    private readonly bus: EventBus,
    private readonly log: Logger,
  ) {
    this.table = initial;
    this.lastSeen = initial.revision;
  }

  get current(): RouteTable {
    return this.table;
  }

  /** Called after each accepted reload with the new and the previous table (verdict clearing hooks in here). */
  onReload(listener: ReloadListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Re-reads the file (SIGHUP, or a caller that wants it now); reloads are
   * serialised so two quick saves apply in order. An explicit reload
   * re-reports a file that is still broken.
   */
  reload(reason: string): Promise<void> {
    return this.enqueue(reason, false);
  }

  private enqueue(reason: string, fromWatcher: boolean): Promise<void> {
    // a reload that throws must neither stop the ones after it nor crash the daemon (SIGHUP and the watcher don't await)
    this.reloading = this.reloading.then(() => this.reloadNow(reason, fromWatcher)).catch((error: unknown) => {
      this.log.error({ err: error, file: this.table.path, reason }, "routes reload failed unexpectedly; the table in force is unchanged");
    });
    return this.reloading;
  }

  private async reloadNow(reason: string, fromWatcher: boolean): Promise<void> {
    const path = this.table.path;
    let text = await this.read(path, reason, fromWatcher);
    // an editor truncates before it writes; the write's own event follows
    if (text === undefined || (fromWatcher && (text.trim() === "" || revisionOf(text) === this.lastSeen))) return;
    let result = parseRoutes(text, path, { knownPlugins: this.knownPlugins });
    // A watcher can catch a save half-written. A broken read is reported only
    // if another look, a moment later, finds the same text.
    for (let look = 0; !result.ok && fromWatcher && look < SETTLE_LOOKS; look++) {
      await delay(SETTLE_MS);
      const again = await this.read(path, reason, true);
      if (again === undefined || again === text) break;
      text = again;
      result = parseRoutes(text, path, { knownPlugins: this.knownPlugins });
    }
    this.lastSeen = revisionOf(text);
    if (!result.ok) {
      this.reject(path, result.problems, reason);
      return;
    }
    if (result.table.revision === this.table.revision) return;
    const previous = this.table;
    this.table = result.table;
    this.log.info({ file: path, revision: result.table.revision, previous: previous.revision, reason }, "routes reloaded");
    this.bus.publish({ type: "routes.reloaded", revision: result.table.revision, previous_revision: previous.revision, file: path });
    for (const listener of this.listeners) {
      try {
        listener(result.table, previous);
      } catch (error) {
        this.log.error({ err: error, revision: result.table.revision }, "a routes.reloaded listener failed");
      }
    }
  }

  /** The file's text, or undefined when it cannot be read (reported, except for the gap of a save by rename). */
  private async read(path: string, reason: string, fromWatcher: boolean): Promise<string | undefined> {
    try {
      return await readFile(path, "utf8");
    } catch (error) {
      if (fromWatcher && (error as NodeJS.ErrnoException).code === "ENOENT") return undefined; // the watcher's `add` follows
      this.reject(path, [{ file: path, line: 1, column: 1, message: `cannot read: ${(error as Error).message}` }], reason);
      return undefined;
    }
  }

  private reject(path: string, problems: RouteProblem[], reason: string): void {
    const errors = problems.map(formatProblem);
    this.log.error({ file: path, errors, reason, revision_in_force: this.table.revision }, `routes rejected, keeping revision ${this.table.revision}: ${errors[0]}`);
    this.bus.publish({ type: "routes.rejected", file: path, errors: problems, revision_in_force: this.table.revision });
  }

  /**
   * Watches the file through its folder (not its subfolders). A watch on the
   * file alone follows an inode, which an editor that saves by rename
   * replaces; and a Kubernetes ConfigMap updates by swapping a `..data`
   * symlink beside the file, never touching the file's own entry. So any
   * change in the folder re-reads the file, and the content hash makes that
   * free when the file did not change. Resolves once the watch is armed.
   */
  async watch(): Promise<void> {
    if (this.watcher) return;
    const file = resolve(this.table.path);
    const folder = dirname(file);
    const name = basename(file);
    // Only the file and ConfigMap's `..data` swaps count. The folder may be
    // $CARRIERD_HOME, where every SQLite write touches state.db-wal: those
    // events must cost nothing and must not hold a reload back by resetting
    // its quiet timer under load.
    const ignored = (path: string) => path !== folder && basename(path) !== name && !basename(path).startsWith("..");
    const watcher = watch(folder, { ignoreInitial: true, atomic: 50, depth: 0, ignored });
    this.watcher = watcher;
    watcher.on("all", () => this.onFileEvent());
    // a save made before chokidar is ready would be missed, and the gateway must not say it is listening on a stale table
    await new Promise<void>((resolve) => watcher.once("ready", () => resolve()));
  }

  /**
   * Reads once the folder has been quiet for QUIET_MS, so a save is in force
   * well within a second, and once more TRAILING_MS after the last event:
   * chokidar drops a `change` that comes within 50 ms of the previous one,
   * and a save may first be seen truncated or half-written.
   * The content hash makes the second read free when nothing changed.
   */
  private onFileEvent(): void {
    clearTimeout(this.quietTimer);
    this.quietTimer = setTimeout(() => void this.enqueue("file changed", true), QUIET_MS);
    this.quietTimer.unref();
    clearTimeout(this.trailingTimer);
    this.trailingTimer = setTimeout(() => void this.enqueue("file changed", true), TRAILING_MS);
    this.trailingTimer.unref();
  }

  async close(): Promise<void> {
    clearTimeout(this.quietTimer);
    clearTimeout(this.trailingTimer);
    await this.watcher?.close();
    this.watcher = undefined;
    await this.reloading;
  }
}

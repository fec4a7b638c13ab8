import { readFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { watch, type FSWatcher } from "chokidar";
import type { EventBus } from "../events/event-bus.js";
import type { Logger } from "../logging/logger.js";
import { formatProblem, parseRoutes, revisionOf, type RouteProblem } from "./load-routes.js";
import type { RouteTable } from "./route-table.js";

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
  private settleTimer: NodeJS.Timeout | undefined;

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

  private enqueue(reason: string, onlyIfChanged: boolean): Promise<void> {
    this.reloading = this.reloading.then(() => this.reloadNow(reason, onlyIfChanged));
    return this.reloading;
  }

  private async reloadNow(reason: string, onlyIfChanged: boolean): Promise<void> {
    const path = this.table.path;
    let text: string;
    try {
      text = await readFile(path, "utf8");
    } catch (error) {
      // mid-save by rename the file is briefly absent; the watcher's `add` follows
      if (onlyIfChanged && (error as NodeJS.ErrnoException).code === "ENOENT") return;
      this.reject(path, [{ file: path, line: 1, column: 1, message: `cannot read: ${(error as Error).message}` }], reason);
      return;
    }
    if (onlyIfChanged && text.trim() === "") {
      // an editor truncates before it writes; the write's own event follows
      this.log.debug({ file: path }, "routes file is empty, waiting for the rest of the save");
      return;
    }
    const revision = revisionOf(text);
    if (onlyIfChanged && revision === this.lastSeen) return;
    this.lastSeen = revision;
    const result = parseRoutes(text, path, { knownPlugins: this.knownPlugins });
    if (!result.ok) {
      this.reject(path, result.problems, reason);
      return;
    }
    if (result.table.revision === this.table.revision) return;
    const previous = this.table;
    this.table = result.table;
    this.log.info({ file: path, revision: result.table.revision, previous: previous.revision, reason }, "routes reloaded");
    this.bus.publish({ type: "routes.reloaded", revision: result.table.revision, previous_revision: previous.revision, file: path });
    for (const listener of this.listeners) listener(result.table, previous);
  }

  private reject(path: string, problems: RouteProblem[], reason: string): void {
    const errors = problems.map(formatProblem);
    this.log.error({ file: path, errors, reason, revision_in_force: this.table.revision }, `routes rejected, keeping revision ${this.table.revision}: ${errors[0]}`);
    this.bus.publish({ type: "routes.rejected", file: path, errors: problems, revision_in_force: this.table.revision });
  }

  /**
   * Watches the file through its folder: a watch on the file itself follows
   * its inode, which an editor that saves by rename replaces (and under load
   * chokidar can lose the re-watch). Only this one file is looked at.
   * Resolves once the watch is armed.
   */
  async watch(): Promise<void> {
    if (this.watcher) return;
    const file = resolve(this.table.path);
    const folder = dirname(file);
    const watcher = watch(folder, { ignoreInitial: true, atomic: 50, depth: 0, ignored: (path) => path !== folder && path !== file });
    this.watcher = watcher;
    const onEvent = (path: string) => {
      if (path === file) this.onFileEvent();
    };
    watcher.on("change", onEvent).on("add", onEvent);
    // a save made before chokidar is ready would be missed, and the gateway must not say it is listening on a stale table
    await new Promise<void>((resolve) => watcher.once("ready", () => resolve()));
  }

  /**
   * Reads now, so a save is in force well within a second, and once more
   * shortly after: chokidar drops a `change` that comes within 50 ms of the
   * previous one, and a save may first be seen truncated or half-written.
   * The content hash makes the second read free when nothing changed.
   */
  private onFileEvent(): void {
    void this.enqueue("file changed", true);
    clearTimeout(this.settleTimer);
    this.settleTimer = setTimeout(() => void this.enqueue("file changed", true), 150);
    this.settleTimer.unref();
  }

  async close(): Promise<void> {
    clearTimeout(this.settleTimer);
    await this.watcher?.close();
    this.watcher = undefined;
    await this.reloading;
  }
}

import { setTimeout as delay } from "node:timers/promises";
import { basename, dirname, resolve } from "node:path";
import { watch, type FSWatcher } from "chokidar";
import type { EventBus } from "../../foundation/event-bus/event-bus.js";
import type { Logger } from "../../foundation/logging/logger.js";
import { cannotRead, formatProblem, revisionOf, type RouteProblem } from "./load-routes.js";
import { readRoutesFile, type RoutesRead } from "./read-routes-file.js";
import { RouteParser } from "./route-parser.js";
import { RouteTable } from "./route-table.js";

/** Read once the folder has been quiet this long: most saves are several events. */
const QUIET_MS = 40;
/** And once more after this, for a change chokidar dropped (it drops one within 50 ms of the last). */
const TRAILING_MS = 150;
/**
 * A save is taken only once two reads this far apart find the same bytes,
 * size and mtime: a file caught half-written (even when its first half is
 * itself a valid table) is still changing, and is read again until it
 * stops. A writer that pauses longer than this mid-save can still be caught;
 * saving by rename (what most editors and kubelet do) never can.
 */
export const STABLE_MS = 300;
/** How long `close` waits for a reload in progress (it reads nothing that can block, so this is a backstop). */
const CLOSE_WAIT_MS = 1000;

export type ReloadListener = (next: RouteTable, previous: RouteTable) => void;

/**
 * Holds the route table in force: one reference, swapped whole. A request
 * reads `current` once and keeps that table to its end. Whatever is at the
 * path — a file that fails to parse or validate, a directory, a FIFO, a
 * device, a symlink loop, a file over the size cap, nothing at all — is
 * rejected whole, and the last good table stays.
 */
export class RouteSource {
  private table: RouteTable;
  private watcher: FSWatcher | undefined;
  private readonly listeners = new Set<ReloadListener>();
  private readonly parser: RouteParser;
  private reloading: Promise<void> = Promise.resolve();
  /** A watcher reload is queued and has not started: later events need not queue another, it reads the file when it runs. */
  private watcherQueued = false;
  /** What the last completed read found (content hash, or why it could not be read): a watcher event that changed nothing is ignored. */
  private lastSeen: string;
  private quietTimer: NodeJS.Timeout | undefined;
  private trailingTimer: NodeJS.Timeout | undefined;
  private readonly closing = new AbortController();

  constructor(
    initial: RouteTable,
    knownPlugins: ReadonlySet<string>,
    private readonly bus: EventBus,
    private readonly log: Logger,
  ) {
    this.table = initial;
    this.lastSeen = initial.revision;
    this.parser = new RouteParser(knownPlugins);
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
   * Re-reads the file at once (SIGHUP, or a caller that wants it now);
   * reloads are serialised so two quick saves apply in order. An explicit
   * reload re-reports a file that is still broken.
   */
  reload(reason: string): Promise<void> {
    return this.enqueue(reason, false);
  }

  private enqueue(reason: string, fromWatcher: boolean): Promise<void> {
    if (this.closing.signal.aborted) return this.reloading;
    if (fromWatcher) {
      // a parse still running is of an older save: the reload queued (now or before) reads the newest
      this.parser.cancel();
      if (this.watcherQueued) return this.reloading;
      this.watcherQueued = true;
    }
    // a reload that throws must neither stop the ones after it nor crash the daemon (SIGHUP and the watcher don't await)
    this.reloading = this.reloading
      .then(() => this.reloadNow(reason, fromWatcher))
      .catch((error: unknown) => {
        if (this.closing.signal.aborted) return;
        this.log.error({ err: error, file: this.table.path, reason }, "routes reload failed unexpectedly; the table in force is unchanged");
      });
    return this.reloading;
  }

  private async reloadNow(reason: string, fromWatcher: boolean): Promise<void> {
    if (fromWatcher) this.watcherQueued = false;
    if (this.closing.signal.aborted) return;
    const path = this.table.path;
    const read = fromWatcher ? await this.readSettled(path) : await readRoutesFile(path);
    if (read === undefined) return; // closing
    const seen = read.ok ? revisionOf(read.text) : `unreadable: ${read.message}`;
    if (fromWatcher && seen === this.lastSeen) return;
    if (!read.ok) {
      this.lastSeen = seen;
      this.reject(path, [cannotRead(path, read.message)], reason);
      return;
    }
    const outcome = await this.parser.parse(read.text, path);
    if ("superseded" in outcome) return; // a newer save, or the shutdown, came first
    this.lastSeen = seen;
    if (!outcome.ok) {
      this.reject(path, outcome.problems, reason);
      return;
    }
    if (outcome.revision === this.table.revision) return;
    const previous = this.table;
    const next = new RouteTable(outcome.data, outcome.revision, path);
    this.table = next;
    this.log.info({ file: path, revision: next.revision, previous: previous.revision, reason }, "routes reloaded");
    this.bus.publish({ type: "routes.reloaded", revision: next.revision, previous_revision: previous.revision, file: path });
    for (const listener of this.listeners) {
      try {
        listener(next, previous);
      } catch (error) {
        this.log.error({ err: error, revision: next.revision }, "a routes.reloaded listener failed");
      }
    }
  }

  /**
   * Reads until two reads STABLE_MS apart agree (same bytes, size and
   * mtime, or the same reason the path cannot be read); undefined when the
   * source closes meanwhile.
   */
  private async readSettled(path: string): Promise<RoutesRead | undefined> {
    let read = await readRoutesFile(path);
    for (;;) {
      try {
        await delay(STABLE_MS, undefined, { signal: this.closing.signal });
      } catch {
        return undefined;
      }
      const again = await readRoutesFile(path);
      if (sameRead(read, again)) return again;
      read = again;
    }
  }

  private reject(path: string, problems: RouteProblem[], reason: string): void {
    const errors = problems.map(formatProblem);
    this.log.error(
      { file: path, errors, reason, revision_in_force: this.table.revision },
      `routes rejected, keeping revision ${this.table.revision}: ${errors[0]}`,
    );
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
    // chokidar reports what it cannot watch or stat (a symlink loop at ..data, a folder it may not read) as
    // an `error` event, which without a listener is thrown and ends the process; the path is read on every event anyway
    watcher.on("error", (error) => {
      this.log.warn({ err: error, file }, "the routes watcher hit an error; it keeps watching, and the file is re-read");
      this.onFileEvent();
    });
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

  /** Stops watching; a reload in progress is given up. Never waits on the file. */
  async close(): Promise<void> {
    this.closing.abort();
    clearTimeout(this.quietTimer);
    clearTimeout(this.trailingTimer);
    this.parser.close();
    const watcher = this.watcher;
    this.watcher = undefined;
    let timer: NodeJS.Timeout | undefined;
    const backstop = new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_WAIT_MS)));
    await Promise.race([Promise.all([watcher?.close().catch(() => undefined), this.reloading]), backstop]);
    clearTimeout(timer);
  }
}

function sameRead(a: RoutesRead, b: RoutesRead): boolean {
  if (a.ok && b.ok) return a.text === b.text && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ino === b.ino;
  return !a.ok && !b.ok && a.code === b.code;
}

import { readFileSync, watch, type FSWatcher } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import { parse } from "dotenv";

/** A burst of events (an editor's save) is read once it has been quiet this long. */
const QUIET_MS = 100;
/** And once more this long after the last event: a save may first be seen half-written. */
const TRAILING_MS = 1000;

/**
 * The `.env` files the gateway reads (./.env, then $CARRIERD_HOME/.env),
 * read at start and again whenever one of them is saved, so a provider key
 * added while carrierd runs is in force after the save, like an edit of
 * routes.yaml. What the real environment set is never overridden, the first
 * file wins over the later ones (dotenv's rules), and a variable taken out
 * of every file is taken out of the environment again.
 */
export class EnvFiles {
  readonly paths: readonly string[];
  /** The names the real environment had before any file was read: those stay as they are. */
  private readonly real: ReadonlySet<string>;
  /** What the files set, by name. */
  private fromFiles = new Map<string, string>();
  private watchers: FSWatcher[] = [];
  private quietTimer: NodeJS.Timeout | undefined;
  private trailingTimer: NodeJS.Timeout | undefined;

  constructor(
    paths: readonly string[],
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    this.paths = paths.map((path) => resolve(path));
    this.real = new Set(Object.keys(env));
  }

  /** Reads the files and applies them to the environment; returns the names whose value changed (never the values). */
  load(): string[] {
    const next = new Map<string, string>();
    for (const path of this.paths) {
      for (const [name, value] of Object.entries(parse(readIfThere(path)))) if (!next.has(name) && !this.real.has(name)) next.set(name, value);
    }
    const changed: string[] = [];
    for (const [name, value] of next) {
      if (this.fromFiles.get(name) === value) continue;
      this.env[name] = value;
      changed.push(name);
    }
    for (const name of this.fromFiles.keys()) {
      if (next.has(name)) continue;
      delete this.env[name];
      changed.push(name);
    }
    this.fromFiles = next;
    return changed;
  }

  /**
   * Re-reads the files whenever one is saved, and calls `changed` with the
   * names a save changed. Watches each file's folder (not its subfolders):
   * an editor that saves by rename replaces the file's inode, and a file
   * that does not exist yet can still be created. The folder may be
   * $CARRIERD_HOME, where every SQLite write touches state.db-wal, so the
   * folder's events are told apart by name alone, with no read of the
   * folder: a watcher that lists the folder on each event costs every
   * stored turn a readdir and an lstat per entry.
   */
  async watch(changed: (names: string[]) => void, failed: (error: unknown) => void): Promise<void> {
    const reread = () => {
      try {
        const names = this.load();
        if (names.length > 0) changed(names);
      } catch (error) {
        failed(error);
      }
    };
    const onEvent = () => {
      clearTimeout(this.quietTimer);
      this.quietTimer = setTimeout(reread, QUIET_MS).unref();
      clearTimeout(this.trailingTimer);
      this.trailingTimer = setTimeout(reread, TRAILING_MS).unref();
    };
    for (const folder of new Set(this.paths.map((path) => dirname(path)))) {
      const names = new Set(this.paths.filter((path) => dirname(path) === folder).map((path) => basename(path)));
      let watcher: FSWatcher;
      try {
        watcher = watch(folder, { persistent: false }, (_event, name) => {
          // an event without a name (some platforms) may be the file's: read again
          if (name === null || names.has(name.toString())) onEvent();
        });
      } catch (error) {
        failed(error);
        continue;
      }
      // without a listener a watcher's error would end the process; the files are read again on the next event anyway
      watcher.on("error", failed);
      this.watchers.push(watcher);
    }
  }

  async close(): Promise<void> {
    clearTimeout(this.quietTimer);
    clearTimeout(this.trailingTimer);
    const watchers = this.watchers;
    this.watchers = [];
    for (const watcher of watchers) watcher.close();
  }
}

/** The file's text, or nothing when it does not exist (a missing .env is the usual case). */
function readIfThere(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return "";
    throw error;
  }
}

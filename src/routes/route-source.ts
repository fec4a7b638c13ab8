import { watch, type FSWatcher } from "chokidar";
import type { EventBus } from "../events/event-bus.js";
import type { Logger } from "../logging/logger.js";
import { formatProblem, loadRoutesFile, type RouteProblem } from "./load-routes.js";
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

  constructor(
    initial: RouteTable,
    private readonly knownPlugins: ReadonlySet<string>,
    private readonly bus: EventBus,
    private readonly log: Logger,
  ) {
    this.table = initial;
  }

  get current(): RouteTable {
    return this.table;
  }

  /** Called after each accepted reload with the new and the previous table (verdict clearing hooks in here). */
  onReload(listener: ReloadListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Re-reads the file; reloads are serialised so two quick saves apply in order. */
  reload(reason: string): Promise<void> {
    this.reloading = this.reloading.then(() => this.reloadNow(reason));
    return this.reloading;
  }

  private async reloadNow(reason: string): Promise<void> {
    const path = this.table.path;
    const result = await loadRoutesFile(path, { knownPlugins: this.knownPlugins });
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

  /** Watches the file; editors that save by rename are followed too. */
  watch(): void {
    if (this.watcher) return;
    this.watcher = watch(this.table.path, { ignoreInitial: true, atomic: 50 });
    const onChange = () => void this.reload("file changed");
    this.watcher.on("change", onChange).on("add", onChange);
  }

  async close(): Promise<void> {
    await this.watcher?.close();
    this.watcher = undefined;
    await this.reloading;
  }
}

import type { DependencyContainer } from "tsyringe";
import { CHECKPOINT_STORE, COMPACTOR } from "../container/tokens.js";
import type { Db } from "../store/database.js";
import { CheckpointStore } from "./checkpoint-store.js";
import { Compactor } from "./compactor.js";

export { COMPACTION_MIGRATIONS } from "./migrations.js";

/** Registers the checkpoint store and the compactor the Responses API asks before each continued request. */
export function installCompaction(container: DependencyContainer, database: Db): void {
  container.register(CHECKPOINT_STORE, { useValue: new CheckpointStore(database) });
  container.registerSingleton(COMPACTOR, Compactor);
}

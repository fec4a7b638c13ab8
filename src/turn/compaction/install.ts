import type { DependencyContainer } from "tsyringe";
import { COMPACTOR } from "../../foundation/container/tokens.js";
import { Compactor } from "./compactor.js";

/** Registers the compactor the Responses API asks before each continued request (its checkpoints are in the Storage port). */
export function installCompaction(container: DependencyContainer): void {
  container.registerSingleton(COMPACTOR, Compactor);
}

import { resolveHome } from "../../foundation/config/options.js";
import { resolveStore, type StoreFlags } from "../../foundation/config/store-choice.js";
import type { Storage } from "../../storage/storage.js";
import { openStorage } from "../../storage/open/open-storage.js";

/** What names a command's state: `--home` (or CARRIERD_HOME) and `--store` (or CARRIERD_STORE). */
export interface StateFlags extends StoreFlags {
  home?: string;
}

/**
 * The configured store for a CLI command: state.db in `$CARRIERD_HOME`
 * opened as the gateway opens it (every migration applied, every write
 * durable when it resolves, safely beside a running gateway), or the
 * PostgreSQL store the gateways share. The command does not journal: it
 * has no answers to end early.
 */
export function openState(flags: StateFlags): Promise<Storage> {
  return openStorage(resolveStore(flags), { home: resolveHome(flags.home) });
}

/** Runs a CLI command against the configured store, closing it afterwards. */
export async function withState<T>(flags: StateFlags, run: (storage: Storage) => Promise<T>): Promise<T> {
  const storage = await openState(flags);
  try {
    return await run(storage);
  } finally {
    await storage.close();
  }
}

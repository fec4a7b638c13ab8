import { resolveHome } from "../config/options.js";
import type { Storage } from "../storage/storage.js";
import { openSqliteStorage } from "../storage-sqlite/open-sqlite-storage.js";

/**
 * The storage of `$CARRIERD_HOME` (from --home or the environment) for a CLI
 * command: state.db opened as the gateway opens it, every migration applied
 * and every write durable when it resolves, safely beside a running gateway
 * (WAL). The command does not journal: it has no answers to end early.
 */
export function openState(home: string): Storage {
  return openSqliteStorage({ home });
}

/** Runs a CLI command against the storage of `$CARRIERD_HOME`, closing it afterwards. */
export async function withState<T>(flags: { home?: string }, run: (storage: Storage) => Promise<T>): Promise<T> {
  const storage = openState(resolveHome(flags.home));
  try {
    return await run(storage);
  } finally {
    await storage.close();
  }
}

import type { Storage } from "../storage/storage.js";

/** How long /health waits for the store: a load balancer's probe must get an answer well within its own timeout. */
const STORE_PROBE_MS = 2000;

/**
 * The store as /health reports it: `local` for a store inside this process
 * (SQLite), else `ok` or `unavailable` by one bounded probe of the shared
 * store.
 */
export async function storeHealth(storage: Storage): Promise<"local" | "ok" | "unavailable"> {
  if (!storage.reachable) return "local";
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), STORE_PROBE_MS);
  });
  try {
    return (await Promise.race([storage.reachable(), late])) ? "ok" : "unavailable";
  } finally {
    clearTimeout(timer);
  }
}

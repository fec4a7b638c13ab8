/**
 * Where carrierd keeps its state (docs/operators.md#flags-and-environment): `sqlite`, the default, a file
 * in `$CARRIERD_HOME`; or a PostgreSQL URL, shared by any number of
 * gateways and every CLI command pointed at it.
 */
export type StoreChoice = { readonly kind: "sqlite" } | { readonly kind: "postgres"; readonly url: string; readonly poolSize: number };

export interface StoreFlags {
  store?: string;
  storePoolSize?: number;
}

/** Connections a gateway (or a command) opens at most to PostgreSQL unless told otherwise. */
export const DEFAULT_STORE_POOL_SIZE = 4;

/** `--store` / CARRIERD_STORE and `--store-pool-size` / CARRIERD_STORE_POOL_SIZE. */
export function resolveStore(flags: StoreFlags, env: Record<string, string | undefined> = process.env): StoreChoice {
  const value = (flags.store ?? env.CARRIERD_STORE ?? "sqlite").trim();
  if (value === "" || value === "sqlite") return { kind: "sqlite" };
  if (!/^postgres(ql)?:\/\//i.test(value)) throw new Error(`invalid store: ${redactStoreUrl(value)} (sqlite, or a postgres:// URL)`);
  try {
    new URL(value);
  } catch {
    throw new Error(`invalid store URL: ${redactStoreUrl(value)}`);
  }
  const size = flags.storePoolSize ?? (env.CARRIERD_STORE_POOL_SIZE ? Number(env.CARRIERD_STORE_POOL_SIZE) : DEFAULT_STORE_POOL_SIZE);
  if (!Number.isInteger(size) || size < 1 || size > 1000)
    throw new Error(`invalid store pool size: ${String(flags.storePoolSize ?? env.CARRIERD_STORE_POOL_SIZE)} (a whole number of connections, 1 or more)`);
  return { kind: "postgres", url: value, poolSize: size };
}

/** The store as logs, `routes explain` and /v1/capabilities show it: `sqlite`, or the URL with its secrets replaced. */
export function describeStore(choice: StoreChoice): string {
  return choice.kind === "sqlite" ? "sqlite" : redactStoreUrl(choice.url);
}

/** A URL with its password (and any query parameter that looks like a secret) replaced by `***`. */
export function redactStoreUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // not a URL: whatever sits between "//" and "@" may be credentials
    return url.replace(/\/\/[^@/]*@/, "//***@");
  }
  if (parsed.password) parsed.password = "***";
  for (const key of [...parsed.searchParams.keys()]) if (/pass|secret|token|key/i.test(key)) parsed.searchParams.set(key, "***");
  return parsed.toString();
}

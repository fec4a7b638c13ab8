import type { ProviderConfig, RequestDialect } from "../../providers/contract.js";
import { routeMatches, type RouteMatch } from "./route-match.js";
import { FALLBACK_DIALECT, SHIPPED_DIALECTS } from "./shipped-dialects.js";

/** One routes.yaml `dialects` entry: the keys it names, for the upstreams its `match` covers. */
export interface DialectRoute {
  match: RouteMatch;
  effort?: RequestDialect["effort"];
  disable?: RequestDialect["disable"];
  developer_role?: RequestDialect["developerRole"];
  token_limit?: RequestDialect["tokenLimit"];
}

/** Where one key of a dialect came from: the file's `dialects` entry N, shipped entry N (both 1-based), or the fallback. */
export type DialectSource = `dialects ${number}` | `shipped ${number}` | "fallback";

export interface ResolvedDialect {
  readonly dialect: RequestDialect;
  readonly from: Readonly<Record<keyof RequestDialect, DialectSource>>;
}

const KEYS = [
  ["effort", "effort"],
  ["disable", "disable"],
  ["developerRole", "developer_role"],
  ["tokenLimit", "token_limit"],
] as const satisfies readonly (readonly [keyof RequestDialect, keyof DialectRoute])[];

/**
 * The dialect of one upstream: each key from the first entry that matches
 * and names it — the file's entries in order, then the shipped ones — else
 * the fallback. An entry changes only the keys it names, so an operator
 * fixing one spelling keeps the rest of what carrierd knows about the host.
 */
export function resolveDialect(fileRoutes: readonly DialectRoute[], provider: ProviderConfig, upstreamModel: string): ResolvedDialect {
  // filled key by key: each value comes from a schema-checked entry of the same key, or the fallback
  const dialect: Partial<Record<keyof RequestDialect, string>> = {};
  const from: Partial<Record<keyof RequestDialect, DialectSource>> = {};
  let missing = KEYS.length;
  const consult = (routes: readonly DialectRoute[], list: "dialects" | "shipped") => {
    for (let index = 0; index < routes.length && missing > 0; index++) {
      const route = routes[index];
      if (!routeMatches(route.match, provider, upstreamModel)) continue;
      for (const [key, fileKey] of KEYS) {
        const value = route[fileKey];
        if (value === undefined || dialect[key] !== undefined) continue;
        dialect[key] = value;
        from[key] = `${list} ${index + 1}`;
        missing--;
      }
    }
  };
  consult(fileRoutes, "dialects");
  consult(SHIPPED_DIALECTS, "shipped");
  for (const [key] of KEYS) {
    if (dialect[key] !== undefined) continue;
    dialect[key] = FALLBACK_DIALECT[key];
    from[key] = "fallback";
  }
  return { dialect: Object.freeze(dialect as RequestDialect), from: Object.freeze(from as ResolvedDialect["from"]) };
}

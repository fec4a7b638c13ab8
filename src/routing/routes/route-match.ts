import type { ProviderConfig } from "../../providers/contract.js";
import { globMatches } from "./glob.js";
import { hostMatches, isLocalHost } from "./host-match.js";

export type OneOrMany = string | string[];

/** routes.yaml `match`, as `carriers` and `dialects` entries spell it: every key given must match, a list matches when any item does. */
export interface RouteMatch {
  provider?: OneOrMany;
  plugin?: OneOrMany;
  host?: OneOrMany;
  model?: OneOrMany;
  local?: boolean;
}

/** Whether `match` covers this provider and upstream model; an empty match covers everything. */
export function routeMatches(match: RouteMatch, provider: ProviderConfig, upstreamModel: string): boolean {
  if (match.provider !== undefined && !list(match.provider).includes(provider.id)) return false;
  if (match.plugin !== undefined && !list(match.plugin).includes(provider.plugin)) return false;
  if (match.host !== undefined && !list(match.host).some((host) => hostMatches(provider.host, host))) return false;
  if (match.model !== undefined && !list(match.model).some((pattern) => globMatches(pattern, upstreamModel))) return false;
  if (match.local !== undefined && isLocalHost(provider.host) !== match.local) return false;
  return true;
}

function list(value: OneOrMany): string[] {
  return Array.isArray(value) ? value : [value];
}

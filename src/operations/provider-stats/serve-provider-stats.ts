import type { ServerResponse } from "node:http";
import { GatewayError } from "../../foundation/errors/gateway-error.js";
import type { ProviderStats } from "./provider-stats.js";
import { isWindowName, WINDOWS, type WindowName } from "./stats-snapshot.js";

/**
 * `GET /v1/stats/providers` (admin, docs/api.md#get-v1statsproviders): every
 * window, or the one `window` names, of this instance's provider numbers.
 */
export function serveProviderStats(stats: ProviderStats, query: URLSearchParams, response: ServerResponse): void {
  const asked = query.get("window");
  if (asked !== null && !isWindowName(asked)) {
    const got = JSON.stringify(asked.slice(0, 40));
    throw new GatewayError("invalid_request", `window must be one of ${Object.keys(WINDOWS).join(", ")}; got ${got}`, "window");
  }
  const names: WindowName[] = asked !== null ? [asked] : Object.keys(WINDOWS).filter(isWindowName);
  const now = Date.now();
  const body = JSON.stringify({ object: "provider_stats", windows: names.map((name) => stats.snapshot(name, now)) });
  response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body), "cache-control": "no-store" });
  response.end(body);
}

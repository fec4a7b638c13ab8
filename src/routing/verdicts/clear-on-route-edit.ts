import type { Logger } from "../../foundation/logging/logger.js";
import type { ProviderConfig } from "../../providers/contract.js";
import type { RouteSource } from "../routes/route-source.js";
import type { RouteTable } from "../routes/route-table.js";
import type { Storage } from "../../storage/storage.js";
import type { VerdictField } from "../../storage/verdicts.js";

/**
 * Editing the routes.yaml route that covers a verdict clears it: the
 * operator's edit is the newer word (docs/sessions-and-replay.md#unknown-field-fallback-verdicts). After each accepted
 * reload, a verdict is cleared when the carriers route that governs its
 * (provider, model) is not the same route as before: edited, removed, or
 * shadowed by a new route in front of it.
 */
export function clearVerdictsOnRouteEdit(routes: RouteSource, storage: Pick<Storage, "verdicts">, log: Logger): () => void {
  return routes.onReload((next, previous) => {
    clearCovered(storage, next, previous, log).catch((error: unknown) =>
      log.error({ err: error, revision: next.revision }, "verdicts covered by the routes.yaml edit could not be cleared"),
    );
  });
}

async function clearCovered(storage: Pick<Storage, "verdicts">, next: RouteTable, previous: RouteTable, log: Logger): Promise<void> {
  const covered = (verdict: VerdictField) => governingRoute(previous, verdict) !== governingRoute(next, verdict);
  // the verdicts its changed routes cover go from the table and from every session's config
  const { verdicts: cleared } = await storage.verdicts.clear(covered);
  if (cleared.length === 0) return;
  log.info(
    { cleared: cleared.map(({ provider, host, model, field }) => ({ provider, host, model, field })), revision: next.revision },
    `routes.yaml edit clears ${cleared.length} verdict(s) its changed routes cover`,
  );
}

/** The governing carriers route, as canonical text ("default" when none matches): equal text means the operator did not touch it. */
function governingRoute(table: RouteTable, verdict: VerdictField): string {
  const provider: ProviderConfig | undefined = table.providers.get(verdict.provider);
  if (!provider) return "no such provider";
  const policy = table.policyFor({ ...provider, host: verdict.host }, verdict.model);
  return policy.routeIndex < 0 ? "default" : JSON.stringify(table.carriers[policy.routeIndex]);
}

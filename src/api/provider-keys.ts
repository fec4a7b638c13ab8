import { GatewayError } from "../errors/gateway-error.js";
import type { ProviderConfig } from "../plugins/contract.js";
import type { RouteTable } from "../routes/route-table.js";

type Env = Readonly<Record<string, string | undefined>>;

/** The variable a provider's key is read from, when routes.yaml names one and the environment leaves it unset or empty. */
export function missingKeyVariable(provider: ProviderConfig, env: Env): string | undefined {
  return provider.apiKeyEnv && !env[provider.apiKeyEnv] ? provider.apiKeyEnv : undefined;
}

/**
 * Refuses a request for a model whose provider has no key, at once and
 * naming the variable to set: without it the call would only fail later, at
 * the provider (a 401), or earlier, on a DNS lookup of a host that is not
 * reachable offline, neither of which says what to do. An unknown model is
 * left to the turn, which answers the 404.
 */
export function requireProviderKey(table: RouteTable, model: string, env: Env): void {
  const resolved = table.resolveModel(model);
  if (!resolved) return;
  const variable = missingKeyVariable(resolved.provider, env);
  if (!variable) return;
  throw new GatewayError(
    "provider_not_configured",
    `The model '${model}' is served by provider '${resolved.provider.id}', whose API key is not set: set ${variable} in carrierd's environment (or in its .env file) and restart the gateway.`,
    "model",
  );
}

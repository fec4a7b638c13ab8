import { GatewayError } from "../foundation/errors/gateway-error.js";
import type { PluginDefinition, ProviderConfig } from "../providers/contract.js";
import type { ResolvedModel, RouteTable } from "../routing/routes/route-table.js";

type Env = Readonly<Record<string, string | undefined>>;

/** Where a provider's plugin is found by name (the plugin registry). */
export interface PluginLookup {
  get(name: string): { readonly definition: PluginDefinition } | undefined;
}

/** What a provider lacks before it can be called, as the operator must set it. */
export interface MissingCredentials {
  /** The variable (or, for a plugin with a rule of its own, the variables) to set. */
  readonly set: string;
  /** True when the provider's plugin named it; false for the `api_key_env` variable. */
  readonly fromPlugin: boolean;
}

/**
 * What `provider` lacks in `env`: its plugin's own rule when it has one
 * (Bedrock: a Bedrock API key or AWS credentials), else the variable its
 * key is read from, when routes.yaml names one and it is unset or empty.
 */
export function missingCredentials(provider: ProviderConfig, env: Env, plugins: PluginLookup): MissingCredentials | undefined {
  const definition = plugins.get(provider.plugin)?.definition;
  if (definition?.missingCredentials) {
    const set = definition.missingCredentials(provider, env);
    return set ? { set, fromPlugin: true } : undefined;
  }
  return provider.apiKeyEnv && !env[provider.apiKeyEnv] ? { set: provider.apiKeyEnv, fromPlugin: false } : undefined;
}

/**
 * Refuses a request for a model whose provider has no key, at once and
 * naming what to set: without it the call would only fail later, at
 * the provider (a 401), or earlier, on a DNS lookup of a host that is not
 * reachable offline, neither of which says what to do. An unknown model is
 * left to the turn, which answers the 404.
 */
export function requireProviderKey(table: RouteTable, model: string, env: Env, plugins: PluginLookup): void {
  const resolved = table.resolveModel(model);
  if (resolved) requireProviderKeyOf(resolved, model, env, plugins);
}

/** requireProviderKey for a route the door has already looked up. */
export function requireProviderKeyOf(resolved: ResolvedModel, model: string, env: Env, plugins: PluginLookup): void {
  const missing = missingCredentials(resolved.provider, env, plugins);
  if (!missing) return;
  throw new GatewayError(
    "provider_not_configured",
    `The model '${model}' is served by provider '${resolved.provider.id}', whose ${missing.fromPlugin ? "credentials are" : "API key is"} not set: set ${missing.set} in carrierd's .env file (read again when it is saved) or in its environment (read at start).`,
    "model",
  );
}

/** One sentence per provider whose key (or, for Bedrock, credentials) is not set: its models are hidden from /v1/models and refused with 503. */
export function unsetKeyWarnings(
  table: RouteTable,
  env: Env,
  plugins: PluginLookup,
  providers: Iterable<ProviderConfig> = table.providers.values(),
): { provider: string; set: string; message: string }[] {
  const warnings: { provider: string; set: string; message: string }[] = [];
  for (const provider of providers) {
    const missing = missingCredentials(provider, env, plugins);
    if (!missing) continue;
    const models = table.models.filter((model) => model.provider === provider.id).map((model) => model.name);
    const listed = models.join(", ") || "none";
    warnings.push({
      provider: provider.id,
      set: missing.set,
      message: missing.fromPlugin
        ? `provider ${provider.id}: credentials not set (set ${missing.set}); its models (${listed}) are not listed and answer 503 until they are`
        : `provider ${provider.id}: ${missing.set} is not set; its models (${listed}) are not listed and answer 503 until it is`,
    });
  }
  return warnings;
}

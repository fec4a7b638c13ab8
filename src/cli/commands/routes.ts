import type { CommandModule } from "yargs";
import { resolve } from "node:path";
import { unsetKeyWarnings } from "../../ingress/provider-keys.js";
import { EnvFiles } from "../../foundation/config/env-files.js";
import { envFilePaths, resolveOptions } from "../../foundation/config/options.js";
import { PluginRegistry } from "../../providers/plugin-registry.js";
import { formatProblem, loadRoutesFile } from "../../routing/routes/load-routes.js";
import { hostOf } from "../../routing/routes/host-match.js";
import { DEFAULT_HOSTED_TOOLS, routeNumber, type RouteTable } from "../../routing/routes/route-table.js";
import { verdictsInForce } from "./verdicts-in-force.js";
import { describeStore } from "../../foundation/config/store-choice.js";

interface RoutesFlags {
  home?: string;
  file?: string;
  routes?: string;
  model?: string;
  provider?: string;
  host?: string;
  plugins?: string;
  json?: boolean;
}

export const routesCommand: CommandModule<object, RoutesFlags> = {
  command: "routes <action>",
  describe: "check a route table, or explain the carrier policy and dialect for a model",
  builder: (yargs) =>
    yargs
      .command<RoutesFlags>({
        command: "check [file]",
        describe: "validate a route table; exit 1 with file:line:col errors",
        builder: (y) => y.positional("file", { type: "string", describe: "default: CARRIERD_ROUTES or ./routes.yaml" }).option("plugins", { type: "string" }),
        handler: async (flags) => {
          const file = resolve(flags.file ?? resolveOptions({}).routesPath);
          const loaded = await loadTable(file, resolveOptions({ plugins: flags.plugins }).pluginDirs);
          if (!loaded) return;
          const { table, registry } = loaded;
          console.log(
            `${file}: ok (revision ${table.revision}; ${table.providers.size} providers, ${table.models.length} models, ${table.carriers.length} carrier routes)`,
          );
          // the gateway reads the same .env files at start, so the warning matches what it will see
          new EnvFiles(envFilePaths(flags.home)).load();
          for (const warning of unsetKeyWarnings(table, process.env, registry)) console.log(`warning: ${warning.message}`);
        },
      })
      .command<RoutesFlags>({
        command: "explain",
        describe: "print the resolved carrier policy, dialect and model family for a request",
        builder: (y) =>
          y
            .option("model", { type: "string", demandOption: true, describe: "the model name a client asks for" })
            .option("provider", { type: "string", describe: "explain for this provider id instead of the model's" })
            .option("host", { type: "string", describe: "explain as if the provider's base_url had this host" })
            .option("routes", { type: "string" })
            .option("plugins", { type: "string" })
            .option("json", { type: "boolean", default: false }),
        handler: async (flags) => {
          const options = resolveOptions({ routes: flags.routes, plugins: flags.plugins });
          const { table, registry } = (await loadTable(options.routesPath, options.pluginDirs)) ?? {};
          if (!table || !registry) return;
          const resolved = table.resolveModel(flags.model!);
          let provider = flags.provider ? table.providers.get(flags.provider) : resolved?.provider;
          if (!provider) {
            console.error(
              flags.provider ? `no provider "${flags.provider}" in ${options.routesPath}` : `no model matches "${flags.model}" in ${options.routesPath}`,
            );
            process.exitCode = 1;
            return;
          }
          if (flags.host) provider = { ...provider, host: hostOf(`https://${flags.host}`) || flags.host };
          const upstreamModel = resolved?.upstreamModel ?? flags.model!;
          const policy = table.policyFor(provider, upstreamModel);
          const dialect = table.dialectFor(provider, upstreamModel);
          const verdicts = await verdictsInForce(flags.home, provider.id, provider.host, upstreamModel);
          const explained = {
            model: flags.model,
            provider: provider.id,
            plugin: provider.plugin,
            host: provider.host,
            upstream_model: upstreamModel,
            // 1-based, as events, logs and the dashboard number it
            route: policy.routeIndex >= 0 ? routeNumber(policy) : "default",
            route_match: policy.routeIndex >= 0 ? table.carriers[policy.routeIndex].match : null,
            fields: policy.fields,
            verdicts: verdicts.map(({ field, status, recorded_at }) => ({ field, status, recorded_at })),
            effective: policy.fields.filter((field) => !verdicts.some((verdict) => verdict.field === field)),
            must_echo: policy.mustEcho,
            request_extra: policy.requestExtra ?? null,
            native: policy.native,
            replay: policy.replay ?? null,
            params: resolved?.params ?? null,
            // what a hosted tool this upstream cannot run gets (docs/routes.md#hosted_tools), and the types its plugin hands on instead
            hosted_tools: resolved?.hostedTools ?? table.file.hosted_tools ?? DEFAULT_HOSTED_TOOLS,
            hosted_passed: registry.get(provider.plugin)?.definition.hostedTools ?? [],
            // each key with the entry that set it: `dialects N` of this file, `shipped N` (docs/routes.md#dialects), or `fallback`
            dialect: dialectInFileTerms(dialect.dialect),
            dialect_from: dialectInFileTerms(dialect.from),
            model_family: table.family.of(upstreamModel),
            family_strip: { patterns: table.family.patterns, from: table.file.model_family ? "model_family" : "shipped" },
            // where those verdicts were read: sqlite, or the PostgreSQL URL with its password redacted
            store: describeStore(options.store ?? { kind: "sqlite" }),
          };
          if (flags.json) console.log(JSON.stringify(explained, null, 2));
          else
            for (const [key, value] of Object.entries(explained)) console.log(`${key.padEnd(15)} ${typeof value === "string" ? value : JSON.stringify(value)}`);
        },
      })
      .demandCommand(1),
  handler: () => undefined,
};

/** A dialect (or where its keys came from) under the names routes.yaml gives its keys. */
function dialectInFileTerms<T>(value: { effort: T; disable: T; developerRole: T; tokenLimit: T }): Record<string, T> {
  return { effort: value.effort, disable: value.disable, developer_role: value.developerRole, token_limit: value.tokenLimit };
}

/** The route table in `file`, checked against the plugins found; undefined (problems printed, exit code 1) when it does not load. */
async function loadTable(file: string, pluginDirs: readonly string[]): Promise<{ table: RouteTable; registry: PluginRegistry } | undefined> {
  const registry = await PluginRegistry.load(pluginDirs);
  const result = await loadRoutesFile(file, { knownPlugins: registry.names });
  if (result.ok) return { table: result.table, registry };
  for (const problem of result.problems) console.error(formatProblem(problem));
  process.exitCode = 1;
  return undefined;
}

import type { CommandModule } from "yargs";
import { resolveOptions } from "../../foundation/config/options.js";
import { PluginRegistry } from "../../providers/plugin-registry.js";

export const pluginsCommand: CommandModule<object, { plugins?: string; json?: boolean }> = {
  command: "plugins list",
  describe: "loaded plugins and their native record types",
  builder: (yargs) =>
    yargs.option("plugins", { type: "string", describe: "extra plugin folders, ':'-separated" }).option("json", { type: "boolean", default: false }),
  handler: async (flags) => {
    const registry = await PluginRegistry.load(resolveOptions({ plugins: flags.plugins }).pluginDirs);
    const rows = registry.list().map(({ definition, folder }) => ({
      name: definition.name,
      api_version: definition.apiVersion,
      native_record: definition.native?.type ?? null,
      description: definition.description,
      folder,
    }));
    if (flags.json) {
      console.log(JSON.stringify(rows, null, 2));
      return;
    }
    for (const row of rows) console.log(`${row.name.padEnd(18)} native: ${(row.native_record ?? "-").padEnd(28)} ${row.description}`);
  },
};

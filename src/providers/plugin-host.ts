import type { Logger } from "../foundation/logging/logger.js";
import type { PluginContext, ProviderPlugin } from "./contract.js";
import type { PluginRegistry } from "./plugin-registry.js";

/** One instance per loaded plugin, created on first use with the core's services. */
export class PluginHost {
  private readonly instances = new Map<string, ProviderPlugin>();

  constructor(
    readonly registry: PluginRegistry,
    // the core's upstream client, known here only by the contract's shape (upstream/ sits above plugins/)
    private readonly http: PluginContext["http"],
    private readonly log: Logger,
  ) {}

  instance(name: string): ProviderPlugin | undefined {
    let plugin = this.instances.get(name);
    if (!plugin) {
      const loaded = this.registry.get(name);
      if (!loaded) return undefined;
      plugin = loaded.definition.create({ http: this.http, log: this.log.child({ plugin: name }) });
      this.instances.set(name, plugin);
    }
    return plugin;
  }
}

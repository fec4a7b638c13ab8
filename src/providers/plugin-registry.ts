import { existsSync, readdirSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Ajv2020 } from "ajv/dist/2020.js";
import type { Logger } from "../foundation/logging/logger.js";
import { CARRIER_FIELDS, isCarrierField, PLUGIN_API_VERSION, type PluginDefinition } from "./contract.js";
import { errorMessage } from "../foundation/util/error-message.js";
import { isRecord } from "../foundation/util/json-readers.js";

/** The shipped plugins: `plugins/` beside `src/` (or `dist/plugins/` beside `dist/src/` when built). */
const BUILTIN_PLUGIN_DIR = fileURLToPath(new URL("../../plugins", import.meta.url));

const ENTRY_NAMES = ["index.js", "index.mjs", "index.ts"];

/**
 * The plugin API versions this carrierd can load: a plugin declares, as a
 * literal, the version it was written for; versions in this range still
 * mean the same contract.
 */
export const SUPPORTED_PLUGIN_API = { oldest: 1, newest: PLUGIN_API_VERSION } as const;

/** Why a plugin could not be loaded: `plugin_api_unsupported` for a version outside the supported range, `plugin_broken` otherwise. */
export type PluginLoadErrorCode = "plugin_broken" | "plugin_api_unsupported";

/** A plugin folder that exists but cannot be used: fails loudly, with its name and a stable code. */
export class PluginLoadError extends Error {
  constructor(
    readonly plugin: string,
    message: string,
    options?: { cause?: unknown; code?: PluginLoadErrorCode },
  ) {
    super(`plugin "${plugin}" is broken: ${message}`, options);
    this.name = "PluginLoadError";
    this.code = options?.code ?? "plugin_broken";
  }

  readonly code: PluginLoadErrorCode;
}

export interface LoadedPlugin {
  readonly definition: PluginDefinition;
  readonly folder: string;
  /** Validates a native record against the plugin's schema; undefined when the plugin has no native record. */
  readonly validateNative?: (record: unknown) => string | undefined;
}

/** Every plugin found in the shipped folder and the operator's folders, by name. */
export class PluginRegistry {
  private readonly plugins = new Map<string, LoadedPlugin>();

  get names(): ReadonlySet<string> {
    return new Set(this.plugins.keys());
  }

  get(name: string): LoadedPlugin | undefined {
    return this.plugins.get(name);
  }

  list(): LoadedPlugin[] {
    return [...this.plugins.values()].sort((a, b) => a.definition.name.localeCompare(b.definition.name));
  }

  /** Loads `plugins/` and then each extra folder; a later plugin of the same name replaces an earlier one. */
  static async load(extraDirs: readonly string[], log?: Logger): Promise<PluginRegistry> {
    const registry = new PluginRegistry();
    for (const folder of [...pluginFolders(BUILTIN_PLUGIN_DIR), ...extraDirs.flatMap(expandExtraDir)]) {
      const loaded = await loadPlugin(folder);
      if (!loaded) {
        log?.warn({ folder }, "plugin folder has no entry module (index.js); skipped");
        continue;
      }
      if (registry.plugins.has(loaded.definition.name))
        log?.info({ plugin: loaded.definition.name, folder }, "plugin overrides an earlier one of the same name");
      registry.plugins.set(loaded.definition.name, loaded);
    }
    return registry;
  }
}

/** A folder named by --plugins is either one plugin (it has an entry) or a folder of plugins. */
function expandExtraDir(dir: string): string[] {
  if (!existsSync(dir)) throw new PluginLoadError(basename(dir), `folder ${dir} does not exist`);
  return findEntry(dir) ? [dir] : pluginFolders(dir);
}

function pluginFolders(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .map((name) => join(dir, name))
    .filter((path) => statSync(path).isDirectory())
    .sort();
}

function findEntry(folder: string): string | undefined {
  return ENTRY_NAMES.map((name) => join(folder, name)).find((path) => existsSync(path));
}

async function loadPlugin(folder: string): Promise<LoadedPlugin | undefined> {
  const entry = findEntry(folder);
  if (!entry) return undefined;
  const name = basename(folder);
  let module: unknown;
  try {
    module = await import(pathToFileURL(entry).href);
  } catch (error) {
    throw new PluginLoadError(name, `cannot import ${entry}: ${errorMessage(error)}`, { cause: error });
  }
  const definition = checkDefinition(name, isRecord(module) ? module.default : undefined);
  let validateNative: LoadedPlugin["validateNative"];
  if (definition.native) {
    try {
      const ajv = new Ajv2020({ allErrors: true, strict: false });
      const validate = ajv.compile(definition.native.schema);
      validateNative = (record) => (validate(record) ? undefined : ajv.errorsText(validate.errors));
    } catch (error) {
      throw new PluginLoadError(definition.name, `native record schema does not compile: ${errorMessage(error)}`, { cause: error });
    }
  }
  return { definition, folder, validateNative };
}

function checkDefinition(folderName: string, value: unknown): PluginDefinition {
  if (!value || typeof value !== "object") throw new PluginLoadError(folderName, "entry module has no default export");
  const definition = value as Partial<PluginDefinition>;
  if (typeof definition.name !== "string" || definition.name.length === 0) throw new PluginLoadError(folderName, "definition has no name");
  const version = definition.apiVersion;
  if (typeof version !== "number" || !Number.isInteger(version) || version < SUPPORTED_PLUGIN_API.oldest || version > SUPPORTED_PLUGIN_API.newest) {
    const supported =
      SUPPORTED_PLUGIN_API.oldest === SUPPORTED_PLUGIN_API.newest
        ? String(SUPPORTED_PLUGIN_API.newest)
        : `${String(SUPPORTED_PLUGIN_API.oldest)}–${String(SUPPORTED_PLUGIN_API.newest)}`;
    throw new PluginLoadError(definition.name, `written for plugin API ${String(version)}, this carrierd speaks ${supported}`, {
      code: "plugin_api_unsupported",
    });
  }
  if (typeof definition.create !== "function") throw new PluginLoadError(definition.name, "definition has no create() factory");
  if (definition.native && (typeof definition.native.type !== "string" || typeof definition.native.schema !== "object")) {
    throw new PluginLoadError(definition.name, "native must be { type: string, schema: JSON Schema }");
  }
  const field: unknown = definition.native?.field;
  if (field !== undefined && !isCarrierField(field)) throw new PluginLoadError(definition.name, `native.field must be one of ${CARRIER_FIELDS.join(", ")}`);
  return definition as PluginDefinition;
}

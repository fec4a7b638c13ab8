import { ModelFamily } from "../carriers/model-family.js";
import {
  DEFAULT_DEADLINES,
  type CarrierField,
  type CarrierPolicy,
  type JsonObject,
  type ProviderConfig,
  type RequestDialect,
  type UpstreamDeadlines,
} from "../../providers/contract.js";
import { globCapture, globMatches } from "./glob.js";
import { hostOf, isLocalHost } from "./host-match.js";
import { resolveDialect, type DialectRoute, type ResolvedDialect } from "./request-dialect.js";
import { routeMatches, type RouteMatch } from "./route-match.js";

/** routes.yaml as validated by schemas/routes.schema.json. */
export interface RoutesFile {
  version: 1;
  providers: Record<
    string,
    { plugin: string; base_url?: string; api_key_env?: string; auth?: ProviderConfig["auth"]; headers?: Record<string, string>; deadlines?: DeadlinesEntry }
  >;
  models: ModelEntry[];
  carriers?: CarrierRoute[];
  dialects?: DialectRoute[];
  model_family?: { strip: string[] };
  /** The table-wide hosted-tool rule; a model's own `hosted_tools` wins over it. */
  hosted_tools?: HostedToolsMode;
}

/**
 * What a request that offers a hosted tool its route's upstream cannot run
 * gets (docs/routes.md#hosted_tools): `omit` leaves the tool out of the
 * upstream request and says so, `reject` answers 400.
 */
export type HostedToolsMode = "omit" | "reject";

/** The shipped rule: a client that offers a tool the upstream cannot run still gets its answer. */
export const DEFAULT_HOSTED_TOOLS: HostedToolsMode = "omit";

/** routes.yaml `providers.*.deadlines`, in seconds. */
export interface DeadlinesEntry {
  first_byte?: number;
  idle?: number;
  total?: number;
}

export interface ModelEntry {
  name: string;
  provider: string;
  model?: string;
  params?: JsonObject;
  context_window?: number;
  /** Share of context_window at which a daemon-owned history is compacted (docs/compaction.md#configuration); default 0.8. */
  compact_at?: number;
  /** The model (a `models` name) that writes compaction summaries; default the model itself. */
  summarizer?: string;
  description?: string;
  hosted_tools?: HostedToolsMode;
}

export interface CarrierRoute {
  match: RouteMatch;
  fields: CarrierField[];
  must_echo?: boolean;
  request_extra?: JsonObject;
  native?: boolean;
  replay?: "signed" | "unsigned" | "stripped";
}

/** What a client's model name resolved to. */
export interface ResolvedModel {
  readonly name: string;
  readonly provider: ProviderConfig;
  readonly upstreamModel: string;
  readonly params: JsonObject | undefined;
  readonly contextWindow: number | undefined;
  /** routes.yaml `compact_at`, when set. */
  readonly compactAt?: number;
  /** routes.yaml `summarizer`, when set. */
  readonly summarizer?: string;
  /** How this upstream spells reasoning controls and OpenAI's newer request names (routes.yaml `dialects`). */
  readonly dialect: RequestDialect;
  /** The table's model-family rule (routes.yaml `model_family`). */
  readonly family: ModelFamily;
  /** routes.yaml `hosted_tools`: the model's own, else the file's, else `omit`. */
  readonly hostedTools: HostedToolsMode;
}

/** Distinct (provider, host, upstream model) dialects a table remembers before it starts over. */
const MAX_REMEMBERED_DIALECTS = 1024;

/** With no carriers route matching: local hosts read both plain names, everything else `reasoning_content` (as hermes-agent's route table does, https://github.com/NousResearch/hermes-agent). */
const FALLBACK_LOCAL: CarrierField[] = ["reasoning_content", "reasoning"];
const FALLBACK_REMOTE: CarrierField[] = ["reasoning_content"];

/**
 * An immutable, validated route table. A reload builds a new one and swaps
 * the reference; a request keeps the table it started with.
 */
export class RouteTable {
  readonly providers: ReadonlyMap<string, ProviderConfig>;
  readonly models: readonly ModelEntry[];
  readonly carriers: readonly CarrierRoute[];
  /** The file's own `dialects`, consulted before the shipped ones. */
  readonly dialects: readonly DialectRoute[];
  /** routes.yaml `model_family`, compiled once for the table's life; the shipped rule when the file has none. */
  readonly family: ModelFamily;
  private readonly resolvedDialects = new Map<string, ResolvedDialect>();

  constructor(
    readonly file: RoutesFile,
    /** Content hash of the source text. */
    readonly revision: string,
    readonly path: string,
  ) {
    const providers = new Map<string, ProviderConfig>();
    for (const [id, entry] of Object.entries(file.providers)) {
      providers.set(
        id,
        Object.freeze({
          id,
          plugin: entry.plugin,
          baseUrl: entry.base_url?.replace(/\/+$/, ""),
          host: hostOf(entry.base_url),
          apiKeyEnv: entry.api_key_env,
          auth: entry.auth,
          headers: Object.freeze({ ...entry.headers }),
          deadlines: deadlinesOf(entry.deadlines),
        }),
      );
    }
    this.providers = providers;
    this.models = file.models;
    this.carriers = file.carriers ?? [];
    this.dialects = file.dialects ?? [];
    this.family = file.model_family ? new ModelFamily(file.model_family.strip) : ModelFamily.shipped;
    deepFreeze(file);
  }

  /** First matching `models` entry wins; `openrouter/*` passes the starred part on as the upstream model. */
  resolveModel(name: string): ResolvedModel | undefined {
    for (const entry of this.models) {
      if (!globMatches(entry.name, name)) continue;
      const provider = this.providers.get(entry.provider);
      if (!provider) continue;
      const upstreamModel = entry.model ?? globCapture(entry.name, name) ?? name;
      const { dialect } = this.dialectFor(provider, upstreamModel);
      return {
        name,
        provider,
        upstreamModel,
        params: entry.params,
        contextWindow: entry.context_window,
        compactAt: entry.compact_at,
        summarizer: entry.summarizer,
        dialect,
        family: this.family,
        hostedTools: entry.hosted_tools ?? this.file.hosted_tools ?? DEFAULT_HOSTED_TOOLS,
      };
    }
    return undefined;
  }

  /**
   * The dialect of this provider and upstream model, and which entry gave
   * each key (for `routes explain`). Remembered per table: matching walks
   * every entry's host list, a few microseconds each request would repeat.
   */
  dialectFor(provider: ProviderConfig, upstreamModel: string): ResolvedDialect {
    const key = `${provider.id}\u0000${provider.plugin}\u0000${provider.host}\u0000${upstreamModel}`;
    let resolved = this.resolvedDialects.get(key);
    if (!resolved) {
      resolved = resolveDialect(this.dialects, provider, upstreamModel);
      // client-chosen model names (`openrouter/*`) must not grow it without bound
      if (this.resolvedDialects.size >= MAX_REMEMBERED_DIALECTS) this.resolvedDialects.clear();
      this.resolvedDialects.set(key, resolved);
    }
    return resolved;
  }

  /** The carrier policy of the first `carriers` route that matches this provider and upstream model. */
  policyFor(provider: ProviderConfig, upstreamModel: string): CarrierPolicy {
    const index = this.carriers.findIndex((route) => routeMatches(route.match, provider, upstreamModel));
    if (index < 0) {
      const fields = isLocalHost(provider.host) ? FALLBACK_LOCAL : FALLBACK_REMOTE;
      return { fields, mustEcho: false, requestExtra: undefined, native: true, replay: undefined, routeIndex: -1 };
    }
    const route = this.carriers[index];
    return {
      fields: route.fields,
      mustEcho: route.must_echo ?? false,
      requestExtra: route.request_extra,
      native: route.native ?? true,
      replay: route.replay,
      routeIndex: index,
    };
  }
}

/** A provider's deadlines in milliseconds, each key its default when routes.yaml leaves it out. */
function deadlinesOf(entry: DeadlinesEntry | undefined): UpstreamDeadlines {
  if (!entry) return DEFAULT_DEADLINES;
  const ms = (seconds: number | undefined, fallback: number) => (seconds === undefined ? fallback : Math.round(seconds * 1000));
  return Object.freeze({
    firstByteMs: ms(entry.first_byte, DEFAULT_DEADLINES.firstByteMs),
    idleMs: ms(entry.idle, DEFAULT_DEADLINES.idleMs),
    totalMs: ms(entry.total, DEFAULT_DEADLINES.totalMs),
  });
}

/**
 * The one number a carrier route goes by everywhere (`routes explain`,
 * events, logs, the dashboard): its 1-based position in `carriers`, as an
 * operator counts the entries of routes.yaml; 0 when none matched and the
 * default carriers apply.
 */
export function routeNumber(policy: CarrierPolicy): number {
  return policy.routeIndex + 1;
}

/** The `match` of the carriers route in force as routes.yaml wrote it (what the dashboard names the route by); null: default carriers. */
export function routeMatchOf(table: RouteTable, policy: CarrierPolicy): Readonly<Record<string, unknown>> | null {
  const match = policy.routeIndex >= 0 ? table.carriers[policy.routeIndex]?.match : undefined;
  return match ? { ...match } : null;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { Caller } from "./keys/caller.js";
import type { KeyScope } from "../storage/keys.js";
import type { ErrorShape } from "./respond.js";

/** What a handler learns of its request beyond the request itself: the parsed URL and the path's `{name}` segments, decoded. */
export interface EndpointCall {
  url: URL;
  params: Readonly<Record<string, string>>;
  /** The key the request authenticated with; set on every row the server authenticates (`auth`). */
  caller?: Caller;
}

/** The caller of a row the server authenticated (`auth: true`): always set there. */
export function callerOf(call: EndpointCall): Caller {
  if (!call.caller) throw new Error("an authenticated endpoint was called without a caller");
  return call.caller;
}

export type EndpointHandler = (request: IncomingMessage, response: ServerResponse, call: EndpointCall) => Promise<void> | void;

/** Takes over a WebSocket upgrade request's socket (Node's `upgrade` event). */
export type UpgradeHandler = (request: IncomingMessage, socket: Duplex, head: Buffer) => void;

/** One row of the gateway's endpoint table. */
export interface Endpoint {
  /** An HTTP method, or `*` for every method. */
  readonly method: string;
  /**
   * The path; a `{name}` segment matches any one non-empty segment and
   * reaches the handler in `params`. A `{name}:verb` segment matches a
   * segment that ends in `:verb` after a non-empty name (Google's
   * `models/{model}:generateContent`): the name is the part before it.
   */
  readonly path: string;
  /** Whether the server checks the request's key (and `scope`) before the handler; a row that checks its own (the WebSocket) says false. */
  readonly auth: boolean;
  /**
   * The scope a key needs here. On a row the server authenticates it is
   * enforced before the handler (403 insufficient_scope); on one that
   * authenticates itself, the row enforces it. Absent on probes only.
   */
  readonly scope?: KeyScope;
  /**
   * A probe (health, the browser's favicon) is answered before anything else
   * is read: no key, no `X-Session-Id` check, whatever the method.
   */
  readonly probe?: boolean;
  readonly handler: EndpointHandler;
  /**
   * How this endpoint's wire API spells an error (the table's `errorShape` when absent).
   * Every error of a request to this row is sent in it, those raised before
   * the handler too: a refused key, a 405, a body over the limit.
   */
  readonly errorShape?: ErrorShape;
  /** A request header the key may come in besides `Authorization: Bearer` (lower-case; Anthropic's `x-api-key`, Google's `x-goog-api-key`). */
  readonly keyHeader?: string;
  /** A query parameter the key may come in, after the headers (Google's `?key=`). */
  readonly keyQuery?: string;
  /** When set, WebSocket upgrades on this path are handed here; upgrades anywhere else are refused. */
  readonly upgrade?: UpgradeHandler;
}

export type Match =
  | { kind: "found"; endpoint: Endpoint; params: Record<string, string> }
  /** The path is served, not with this method: a 405 naming the methods that are. */
  /** `served`: a row of the path, whose wire API the answer speaks (its error shape, the header its key may come in). */
  | { kind: "wrong-method"; path: string; allowed: readonly string[]; served: Endpoint }
  | { kind: "none" };

/** A segment of a path with `{name}` segments: matched literally, or taken as the named parameter (before a literal `suffix`, when it has one). */
type Segment = { literal: string } | { param: string; suffix: string };

interface Compiled {
  readonly endpoint: Endpoint;
  readonly segments: readonly Segment[];
}

const NO_PARAMS: Record<string, string> = Object.freeze({});

/**
 * The endpoints in one table, and how their errors are spelled: a request finds its row by method and path,
 * and a path served under other methods is a 405 rather than a 404. A row
 * with a plain path wins over a `{name}` row that also fits; `{name}` rows
 * are tried in the order given. Plain paths are found by one map lookup, so
 * the common requests do not walk the table.
 */
export class EndpointTable {
  private readonly exact = new Map<string, Endpoint[]>();
  private readonly patterns: Compiled[] = [];
  /** Every header a row takes its key in besides Authorization: a path no row serves takes the key in any of them. */
  readonly keyHeaders: readonly string[];

  constructor(
    readonly endpoints: readonly Endpoint[],
    /** How an error is spelled on a row that names no shape of its own and on a path no row serves: the composition root's choice. */
    readonly errorShape: ErrorShape,
  ) {
    this.keyHeaders = [...new Set(endpoints.flatMap((endpoint) => (endpoint.keyHeader ? [endpoint.keyHeader] : [])))];
    for (const endpoint of endpoints) {
      if (!endpoint.path.includes("{")) {
        const rows = this.exact.get(endpoint.path) ?? [];
        rows.push(endpoint);
        this.exact.set(endpoint.path, rows);
        continue;
      }
      if (endpoint.upgrade) throw new Error(`${endpoint.path}: a row that takes WebSocket upgrades needs a plain path`);
      const segments = endpoint.path.split("/").map(compileSegment);
      this.patterns.push({ endpoint, segments });
    }
  }

  match(method: string, pathname: string): Match {
    let allowed: string[] | undefined;
    let served: Endpoint | undefined;
    const exact = this.exact.get(pathname);
    if (exact) {
      const found = exact.find((endpoint) => endpoint.method === method || endpoint.method === "*");
      if (found) return { kind: "found", endpoint: found, params: NO_PARAMS };
      allowed = exact.map((endpoint) => endpoint.method);
      served = exact[0];
    }
    if (this.patterns.length === 0) return allowed ? wrongMethod(served!, allowed) : { kind: "none" };
    const segments = pathname.split("/");
    for (const { endpoint, segments: pattern } of this.patterns) {
      const params = paramsOf(pattern, segments);
      if (!params) continue;
      if (endpoint.method === method || endpoint.method === "*") return { kind: "found", endpoint, params };
      (allowed ??= []).push(endpoint.method);
      served ??= endpoint;
    }
    return allowed ? wrongMethod(served!, [...new Set(allowed)]) : { kind: "none" };
  }

  /** Where a WebSocket upgrade on this path goes, if any row of the path takes upgrades. */
  upgradeAt(pathname: string): UpgradeHandler | undefined {
    return this.exact.get(pathname)?.find((endpoint) => endpoint.upgrade)?.upgrade;
  }
}

/** A 405 for a path `served` serves under other methods, in the error shape of that path's wire API. */
function wrongMethod(served: Endpoint, allowed: readonly string[]): Match {
  return { kind: "wrong-method", path: served.path, allowed, served };
}

/** `{name}`, `{name}:verb` or a literal segment. */
function compileSegment(segment: string): Segment {
  const close = segment.indexOf("}");
  if (!segment.startsWith("{") || close < 0) return { literal: segment };
  const suffix = segment.slice(close + 1);
  if (suffix !== "" && !suffix.startsWith(":")) throw new Error(`${segment}: a {name} segment may be followed only by a ':verb'`);
  return { param: segment.slice(1, close), suffix };
}

/** The path's `{name}` segments, decoded; undefined when the path does not fit (a segment that decodes to a `/` does not). */
function paramsOf(pattern: readonly Segment[], segments: string[]): Record<string, string> | undefined {
  if (pattern.length !== segments.length) return undefined;
  let params: Record<string, string> | undefined;
  for (let index = 0; index < pattern.length; index++) {
    const wanted = pattern[index];
    const segment = segments[index];
    if ("literal" in wanted) {
      if (wanted.literal !== segment) return undefined;
      continue;
    }
    let raw = segment;
    if (wanted.suffix) {
      if (raw.length <= wanted.suffix.length || !raw.endsWith(wanted.suffix)) return undefined;
      raw = raw.slice(0, -wanted.suffix.length);
    }
    let value: string;
    try {
      value = decodeURIComponent(raw);
    } catch {
      return undefined;
    }
    if (value === "" || value.includes("/")) return undefined;
    (params ??= {})[wanted.param] = value;
  }
  return params ?? NO_PARAMS;
}

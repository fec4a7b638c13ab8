import { createHash } from "node:crypto";

/** A function a client offered, as its Responses items name it: a namespace's function carries the namespace beside its own name. */
export interface CallName {
  readonly name: string;
  readonly namespace?: string;
}

/** What every chat upstream accepts as a function name (OpenAI's rule; Anthropic's and Gemini's are no wider). */
const UPSTREAM_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The names under which a request's namespaced functions (a `namespace`
 * tool groups function tools) are offered to a chat upstream, which knows
 * no namespaces, and the way back.
 *
 * The upstream sees one flat name, built as Codex flattens one where a
 * boundary cannot keep the namespace apart: the namespace without trailing
 * `_`, `__`, the name without leading `_` (`multi_agent_v1__spawn_agent`;
 * `ToolName::canonical_flat_name`,
 * https://github.com/openai/codex/blob/main/codex-rs/protocol/src/tool_name.rs).
 * A joined name that no upstream would accept (too long, other characters)
 * or that another tool of the request already has is shortened and made
 * unique by a hash of the pair, the same on every request.
 *
 * A call of a flat name goes back to the client as a `function_call` item
 * with `name` the function's own name and `namespace` its namespace: Codex
 * reads those two fields into the tool it runs
 * (`ToolRouter::build_tool_call`,
 * https://github.com/openai/codex/blob/main/codex-rs/core/src/tools/router.rs),
 * and sends both back on its next request, where they are flattened again.
 */
export class NamespacedNames {
  static readonly NONE = new NamespacedNames();

  private readonly calls = new Map<string, CallName>();
  private readonly flat = new Map<string, string>();

  /** Registers a namespace's function among the request's `taken` names (every function and flat name so far) and returns its flat name. */
  add(namespace: string, name: string, taken: ReadonlySet<string>): string {
    let flat = joinedName(namespace, name);
    if (!UPSTREAM_NAME.test(flat) || taken.has(flat)) flat = hashedName(namespace, name);
    this.calls.set(flat, { name, namespace });
    this.flat.set(pairKey(namespace, name), flat);
    return flat;
  }

  /** The upstream's name for a namespaced function a client item names; the plain joined name for a pair this request does not offer. */
  flatten(namespace: string, name: string): string {
    return this.flat.get(pairKey(namespace, name)) ?? joinedName(namespace, name);
  }

  /** What a call of this upstream name is to the client. */
  callOf(upstreamName: string): CallName {
    return this.calls.get(upstreamName) ?? { name: upstreamName };
  }
}

function joinedName(namespace: string, name: string): string {
  return `${namespace.replace(/_+$/, "")}__${name.replace(/^_+/, "")}`;
}

function hashedName(namespace: string, name: string): string {
  const digest = createHash("sha256").update(pairKey(namespace, name)).digest("hex").slice(0, 10);
  const readable = joinedName(namespace, name)
    .replace(/[^A-Za-z0-9_-]/g, "_")
    .slice(0, 64 - digest.length - 1);
  return `${readable}_${digest}`;
}

function pairKey(namespace: string, name: string): string {
  return `${namespace}\u0000${name}`;
}

import type { ServerResponse } from "node:http";
import { GatewayError } from "../foundation/errors/gateway-error.js";
import type { Logger } from "../foundation/logging/logger.js";
import type { ChatRequest, JsonObject } from "../providers/contract.js";
import type { ResolvedModel } from "../routing/routes/route-table.js";
import { shown } from "../foundation/util/shown.js";
import { isRecord } from "../foundation/util/json-readers.js";

/** The response header naming the tool types carrierd left out of the upstream request (docs/api.md#tools). */
export const TOOLS_OMITTED_HEADER = "X-Carrierd-Tools-Omitted";

/** A tool type is a name, never text: it goes into a response header and a log line. */
const TOOL_TYPE = /^[A-Za-z0-9_.:-]{1,64}$/;

/** (route, type) pairs remembered as logged before the set starts over: client-chosen model names (`openrouter/*`) must not grow it without bound. */
const MAX_NOTED = 4096;

/** What one request's tools become for its route's upstream. */
export interface ToolSorting {
  /** The client-run tools and the hosted tools the upstream runs itself, in the client's order. */
  readonly kept: JsonObject[];
  /** Types left out of the upstream request, each once, in the client's order. */
  readonly omitted: string[];
}

/** How a caller's API tells its own client-run tools (functions, namespaces) from hosted ones, and names a tool for a 400. */
export interface ToolShape {
  readonly clientRun: (tool: JsonObject) => boolean;
  readonly pathOf: (index: number) => string;
}

/**
 * Hosted tools — the ones OpenAI runs on its side (`web_search`,
 * `file_search`, `code_interpreter`, `computer_use`, `image_generation`,
 * `mcp`, `local_shell`, and any type carrierd does not know) — for the
 * route a request goes to, on both APIs. A tool the route's plugin declares
 * (`hostedTools`) goes on verbatim; any other is left out of the upstream
 * request (`hosted_tools: omit`, the default) or refused
 * (`hosted_tools: reject`). Offering a tool is never a reason to refuse a
 * request under `omit`; forcing one with `tool_choice` that the upstream
 * will not see is, since no answer could honour it.
 */
export class HostedToolGate {
  private readonly noted = new Set<string>();

  constructor(
    /** The hosted tool types a plugin hands on to its upstream. */
    private readonly nativeTypes: (plugin: string) => readonly string[],
    private readonly log: Logger,
  ) {}

  sort(route: ResolvedModel, tools: readonly JsonObject[], shape: ToolShape, forced: string | undefined): ToolSorting {
    const native = this.nativeTypes(route.provider.plugin);
    const kept: JsonObject[] = [];
    const omitted: string[] = [];
    tools.forEach((tool, index) => {
      if (shape.clientRun(tool)) {
        kept.push(tool);
        return;
      }
      const type = toolType(tool.type, `${shape.pathOf(index)}.type`);
      if (native.includes(type)) {
        kept.push(tool);
      } else if (route.hostedTools === "reject") {
        throw new GatewayError(
          "invalid_request",
          `Tools of type '${type}' cannot be run by the upstream of model '${route.name}', and routes.yaml sets hosted_tools: reject for it; offer function tools only.`,
          `${shape.pathOf(index)}.type`,
        );
      } else if (!omitted.includes(type)) {
        omitted.push(type);
      }
    });
    if (forced !== undefined && !native.includes(forced))
      throw new GatewayError(
        "invalid_request",
        `'tool_choice' forces a tool of type '${shown(forced)}', which the upstream of model '${route.name}' cannot run, so carrierd does not offer it; use 'auto', 'required', 'none' or a function.`,
        "tool_choice",
      );
    return { kept, omitted };
  }

  /** Names the left-out types in the response header, and logs each (route, type) once in the gateway's life rather than on every request. */
  announce(response: ServerResponse, route: ResolvedModel, omitted: readonly string[]): void {
    if (omitted.length === 0) return;
    if (!response.headersSent) response.setHeader(TOOLS_OMITTED_HEADER, omitted.join(", "));
    for (const type of omitted) {
      const key = `${route.provider.id}\u0000${route.upstreamModel}\u0000${type}`;
      if (this.noted.has(key)) continue;
      if (this.noted.size >= MAX_NOTED) this.noted.clear();
      this.noted.add(key);
      this.log.info(
        { model: route.name, provider: route.provider.id, upstream_model: route.upstreamModel, tool_type: type },
        "hosted tool left out of upstream requests: this route's upstream cannot run it (routes.yaml hosted_tools: omit); logged once per route and tool type",
      );
    }
  }
}

function toolType(value: unknown, param: string): string {
  if (typeof value === "string" && TOOL_TYPE.test(value)) return value;
  throw new GatewayError("invalid_request", `Invalid value for '${param}': a tool type is a name of at most 64 letters, digits and _ . : -.`, param);
}

const CHAT_TOOLS: ToolShape = { clientRun: (tool) => tool.type === "function", pathOf: (index) => `tools[${index}]` };

/** tool_choice types that force no hosted tool. */
const CLIENT_CHOICES = new Set(["function", "allowed_tools"]);

/** The hosted tool type a `tool_choice` forces, on either API (`{"type":"web_search"}`), if it forces one. */
export function forcedHostedType(choice: unknown): string | undefined {
  if (!isRecord(choice)) return undefined;
  const type = choice.type;
  return CLIENT_CHOICES.has(shown(type)) ? undefined : shown(type);
}

/**
 * A chat request's tools as its route's upstream is offered them, sorted in
 * place; returns the omitted types. When every tool was left out, the
 * request goes on with none, and without a `tool_choice` mode that would
 * need one. With no route (an unknown model, answered 404 by the turn) the
 * request is left as it is.
 */
export function sortChatTools(body: ChatRequest, routeOf: (model: string) => ResolvedModel | undefined, gate: HostedToolGate): string[] {
  const forced = forcedHostedType(body.tool_choice);
  // the common request, functions only: nothing to resolve
  if (forced === undefined && !body.tools?.some((tool) => !CHAT_TOOLS.clientRun(tool))) return [];
  const route = routeOf(body.model);
  if (!route) return [];
  const { kept, omitted } = gate.sort(route, body.tools ?? [], CHAT_TOOLS, forced);
  if (kept.length > 0) body.tools = kept;
  else if (body.tools) {
    delete body.tools;
    if (typeof body.tool_choice === "string") delete body.tool_choice;
  }
  return omitted;
}

import { forcedHostedType, type HostedToolGate } from "../hosted-tools.js";
import { GatewayError } from "../../foundation/errors/gateway-error.js";
import type { JsonObject } from "../../providers/contract.js";
import { readObject } from "../../providers/json-readers.js";
import type { ResolvedModel } from "../../routing/routes/route-table.js";
import { shown } from "../../foundation/util/shown.js";
import { NamespacedNames } from "./namespaced-names.js";

/** A Responses request's tools as its chat upstream is offered them. */
export interface UpstreamTools {
  /** Chat-completions tools: functions (a namespace's as flat names) and the hosted tools the upstream runs itself. */
  readonly tools: JsonObject[];
  readonly toolChoice: string | JsonObject | undefined;
  /** How a namespaced function is named upstream, and back. */
  readonly names: NamespacedNames;
  /** Hosted tool types left out of the upstream request. */
  readonly omitted: string[];
  /** The route the hosted tools were sorted for, when there were any. */
  readonly route?: ResolvedModel;
}

export const NO_TOOLS: UpstreamTools = { tools: [], toolChoice: undefined, names: NamespacedNames.NONE, omitted: [] };

const clientRun = (tool: JsonObject) => tool.type === "function" || tool.type === "namespace";
const pathOf = (index: number) => `tools[${index}]`;

/**
 * Responses `tools` and `tool_choice` → chat. Function tools are
 * flattened out of their Responses shape; a `namespace` offers each of its
 * functions under a flat name (NamespacedNames); hosted tools go through the
 * gate of the route (docs/api.md#tools). With no route (an unknown model,
 * answered 404 by the turn) hosted tools are simply not offered.
 */
export function upstreamTools(
  tools: readonly JsonObject[] | null | undefined,
  choice: string | JsonObject | undefined,
  routeOf: () => ResolvedModel | undefined,
  gate: HostedToolGate,
): UpstreamTools {
  if (!tools?.length && choice === undefined) return NO_TOOLS;
  const forced = forcedHostedType(choice);
  // functions and namespaces only, the common request: no route to resolve
  const route = forced !== undefined || tools?.some((tool) => !clientRun(tool)) ? routeOf() : undefined;
  const sorted = route ? gate.sort(route, tools ?? [], { clientRun, pathOf }, forced) : { kept: (tools ?? []).filter(clientRun), omitted: [] };
  const names = new NamespacedNames();
  const taken = new Set<string>();
  for (const tool of sorted.kept) if (tool.type === "function" && typeof tool.name === "string") taken.add(tool.name);
  const upstream: JsonObject[] = [];
  for (const tool of sorted.kept) {
    const index = (tools ?? []).indexOf(tool);
    if (tool.type === "function") upstream.push(chatTool(tool, pathOf(index)));
    else if (tool.type === "namespace") upstream.push(...namespaceTools(tool, pathOf(index), names, taken));
    else upstream.push(tool); // a hosted tool the route's plugin hands on itself
  }
  let toolChoice = choice === undefined ? undefined : chatToolChoice(choice, names);
  // every tool offered was left out: the request goes on with none, and without a mode that would need one
  if (upstream.length === 0 && tools?.length && typeof toolChoice === "string") toolChoice = undefined;
  return { tools: upstream, toolChoice, names, omitted: sorted.omitted, route };
}

/** Responses function tools are flat; chat nests them under `function`. */
function chatTool(tool: JsonObject, path: string, upstreamName?: string): JsonObject {
  if (typeof tool.name !== "string" || !tool.name) throw new GatewayError("invalid_request", `Missing required parameter: '${path}.name'.`, `${path}.name`);
  const fn: JsonObject = { name: upstreamName ?? tool.name };
  if (typeof tool.description === "string") fn.description = tool.description;
  if (tool.parameters && typeof tool.parameters === "object") fn.parameters = tool.parameters;
  if (typeof tool.strict === "boolean") fn.strict = tool.strict;
  return { type: "function", function: fn };
}

/** A namespace's functions, each under its flat name; the namespace's description leads each function's, so the model still reads what the group is for. */
function namespaceTools(tool: JsonObject, path: string, names: NamespacedNames, taken: Set<string>): JsonObject[] {
  if (typeof tool.name !== "string" || !tool.name) throw new GatewayError("invalid_request", `Missing required parameter: '${path}.name'.`, `${path}.name`);
  if (!Array.isArray(tool.tools))
    throw new GatewayError("invalid_request", `Invalid type for '${path}.tools': expected an array of function tools.`, `${path}.tools`);
  const namespace = tool.name;
  return tool.tools.map((raw, index) => {
    const member = readObject(raw);
    const memberPath = `${path}.tools[${index}]`;
    if (!member || member.type !== "function")
      throw new GatewayError(
        "invalid_request",
        `Invalid value for '${memberPath}.type': a namespace groups function tools; got '${shown(member?.type)}'.`,
        `${memberPath}.type`,
      );
    if (typeof member.name !== "string" || !member.name)
      throw new GatewayError("invalid_request", `Missing required parameter: '${memberPath}.name'.`, `${memberPath}.name`);
    const flat = names.add(namespace, member.name, taken);
    taken.add(flat);
    const described =
      typeof tool.description === "string" && tool.description
        ? { ...member, description: typeof member.description === "string" ? `${tool.description} ${member.description}` : tool.description }
        : member;
    return chatTool(described, memberPath, flat);
  });
}

function chatToolChoice(choice: string | JsonObject, names: NamespacedNames): string | JsonObject {
  if (typeof choice === "string") {
    if (choice === "auto" || choice === "none" || choice === "required") return choice;
  } else if (choice.type === "function" && typeof choice.name === "string") {
    const name = typeof choice.namespace === "string" ? names.flatten(choice.namespace, choice.name) : choice.name;
    return { type: "function", function: { name } };
  } else if (choice.type !== "allowed_tools") {
    return choice; // a hosted tool the route's plugin runs (the gate refused any other)
  }
  throw new GatewayError("invalid_request", "Invalid 'tool_choice': use 'auto', 'none', 'required' or {\"type\":\"function\",\"name\":…}.", "tool_choice");
}

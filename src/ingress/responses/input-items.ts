import { newId } from "../../turn/sessions/session-id.js";
import { GatewayError } from "../../foundation/errors/gateway-error.js";
import type { JsonObject } from "../../providers/contract.js";
import { shown } from "../../foundation/util/shown.js";
import { isJsonObject, readArray, readObject, readString } from "../../providers/json-readers.js";

/** Item id prefixes by type, as OpenAI numbers the items it stores. */
const PREFIX: Record<string, string> = { message: "msg_", function_call: "fc_", function_call_output: "fco_", reasoning: "rs_" };

/**
 * A request's `input` as the items GET /v1/responses/{id}/input_items lists:
 * a string is one user message, every item gets an id and a status, content
 * parts get what the spec requires of them (`detail` of an image), and an
 * `item_reference` is listed as the item it named. Runs only after the input
 * was converted, so every item here is one carrierd accepted.
 */
export function inputItemsOf(input: string | unknown[], resolve: (id: string) => JsonObject | undefined): JsonObject[] {
  if (typeof input === "string") return [message("user", [{ type: "input_text", text: input }])];
  return input.filter(isJsonObject).map((accepted) => {
    let item = accepted;
    if (item.type === "item_reference") item = resolve(shown(item.id)) ?? item;
    const type = typeof item.type === "string" ? item.type : "message";
    const listed: JsonObject = { ...item, type, id: typeof item.id === "string" ? item.id : newId(PREFIX[type] ?? "item_") };
    if (type === "message") {
      listed.status = typeof item.status === "string" ? item.status : "completed";
      listed.content =
        typeof item.content === "string"
          ? [{ type: item.role === "assistant" ? "output_text" : "input_text", text: item.content, ...(item.role === "assistant" ? { annotations: [] } : {}) }]
          : (readArray(item.content) ?? []).filter(isJsonObject).map(part);
    } else if (type === "function_call" || type === "function_call_output") {
      listed.status = typeof item.status === "string" ? item.status : "completed";
    } else if (type === "reasoning") {
      listed.summary = Array.isArray(item.summary) ? item.summary : [];
    }
    return listed;
  });
}

function message(role: string, content: JsonObject[]): JsonObject {
  return { type: "message", id: newId("msg_"), status: "completed", role, content };
}

function part(value: JsonObject): JsonObject {
  if (value.type === "input_image") return { ...value, image_url: value.image_url ?? null, detail: value.detail ?? "auto" };
  if (value.type === "output_text") return { annotations: [], ...value };
  return value;
}

export interface ItemPage {
  readonly object: "list";
  readonly data: JsonObject[];
  readonly first_id: string | null;
  readonly last_id: string | null;
  readonly has_more: boolean;
}

/** One page of a response's input items, as OpenAI pages them: `order` (default `desc`), `after` an item id, `limit` 1–100 (default 20). */
export function pageOf(items: readonly JsonObject[], query: URLSearchParams): ItemPage {
  const order = query.get("order") ?? "desc";
  if (order !== "asc" && order !== "desc")
    throw new GatewayError("invalid_request", `Invalid value for 'order': '${order}'. Supported values are: 'asc' and 'desc'.`, "order");
  const limitText = query.get("limit") ?? "20";
  const limit = Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100)
    throw new GatewayError("invalid_request", `Invalid 'limit': '${limitText}'. Expected an integer from 1 to 100.`, "limit");
  const ordered = order === "asc" ? items : [...items].reverse();
  const after = query.get("after");
  let start = 0;
  if (after !== null) {
    const index = ordered.findIndex((item) => item.id === after);
    if (index < 0) throw new GatewayError("not_found", `Item with id '${after}' not found in this response's input.`, "after");
    start = index + 1;
  }
  const data = ordered.slice(start, start + limit);
  return {
    object: "list",
    data,
    first_id: readString(data[0]?.id) ?? null,
    last_id: readString(data[data.length - 1]?.id) ?? null,
    has_more: start + limit < ordered.length,
  };
}

/** Ids of the `item_reference` inputs, in order; malformed ones are left to convertInput to reject. */
export function referencedIds(input: string | unknown[]): string[] {
  if (typeof input === "string") return [];
  const ids: string[] = [];
  for (const item of input) {
    const reference = readObject(item);
    const id = readString(reference?.id);
    if (reference?.type === "item_reference" && id !== undefined) ids.push(id);
  }
  return ids;
}

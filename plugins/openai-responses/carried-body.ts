import {
  arraySpan,
  type BodyPieces,
  type CarriedRequest,
  type ElementSpan,
  isCarrierEnvelope,
  memberOf,
  objectSpan,
  openCarriedBody,
  parseObject,
  spliceTopLevel,
  type UpstreamCall,
} from "../../src/providers/plugin-api.js";
import { itemsFor, type ReasoningItem, type RecordItem } from "./output-record.js";

/** carrierd's own request option (docs/sessions-and-replay.md, per-request opt-out): read by the turn, never sent upstream. */
const CARRIERD_OWN = "model_options";

/**
 * A Responses API client's request on a Responses route, carried: its bytes
 * as it sent them, changed only where carrierd must (docs/api.md#carried-requests):
 * the model the route maps, the route's settings, and the reasoning items of
 * earlier assistant turns. Each turn's reasoning is what replay decided for
 * it (the message's `native_record` in the call's body, this model's output
 * items): a reasoning item the client sent with the upstream's own
 * `encrypted_content` stays as it is; one the client left out, or sent
 * without its blob, goes back where the turn had it, before the item it led
 * to; carrierd's envelope (`cd1.…`, sealed on another route) never goes
 * upstream — its turn gets the stored items, or none, and its function calls
 * get the stored turn's item ids in place of carrierd's, or none: this
 * upstream never issued carrierd's.
 */
export function carriedResponsesBody(call: UpstreamCall, carried: CarriedRequest): Buffer | BodyPieces {
  const body = openCarriedBody(carried.bytes);
  spliceTopLevel(body, call.model, carried.settings);
  const own = memberOf(body.top, CARRIERD_OWN);
  if (own) body.splices.removeMembers(body.top, new Set([own]));
  const input = memberOf(body.top, "input");
  const turns = carried.assistantItems;
  if (!input || !turns || turns.length === 0 || body.bytes[input.valueStart] !== 0x5b) return body.splices.applied();
  const elements = arraySpan(body.bytes, input.valueStart);
  const assistants = call.body.messages.filter((message) => message.role === "assistant");
  const plan = new InputPlan(elements.elements.length);
  turns.forEach((positions, ordinal) => {
    const canonical = assistants[ordinal];
    if (canonical) spliceTurn(plan, body.bytes, readItems(body.bytes, elements.elements, positions), itemsFor(canonical.native_record, call.model) ?? []);
  });
  const keep = plan.keep();
  if (keep) body.splices.rewriteArray(elements, keep);
  return body.splices.applied();
}

type Kept = number | { json: string };

/** The changes to `input`, by element: what goes before it, and what it becomes (undefined: itself). */
class InputPlan {
  private readonly before = new Map<number, Kept[]>();
  private readonly instead = new Map<number, Kept[]>();
  private changed = false;

  constructor(private readonly length: number) {}

  insertBefore(index: number, json: string): void {
    this.before.set(index, [...(this.before.get(index) ?? []), { json }]);
    this.changed = true;
  }

  replace(index: number, kept: Kept[]): void {
    this.instead.set(index, kept);
    this.changed = true;
  }

  /** The array's elements afterwards, or undefined when nothing changes. */
  keep(): Kept[] | undefined {
    if (!this.changed) return undefined;
    const out: Kept[] = [];
    for (let index = 0; index < this.length; index++) out.push(...(this.before.get(index) ?? []), ...(this.instead.get(index) ?? [index]));
    return out;
  }
}

/** One of the client's items of a turn, read from its bytes: what matches it to a stored item. */
interface ReadItem {
  readonly index: number;
  readonly type: string | undefined;
  readonly id: string | undefined;
  readonly callId: string | undefined;
  /** A reasoning item's `encrypted_content` when it is a non-empty string. */
  readonly blob: string | undefined;
  /** Where the item lies, for one that loses its id. */
  readonly element: ElementSpan;
}

function readItems(bytes: Buffer, elements: readonly ElementSpan[], positions: readonly number[]): ReadItem[] {
  const items: ReadItem[] = [];
  for (const index of positions) {
    const element = elements[index];
    if (!element || bytes[element.start] !== 0x7b) continue;
    const object = objectSpan(bytes, element.start);
    const value = (key: string) => {
      const member = memberOf(object, key);
      return member && bytes[member.valueStart] === 0x22 ? stringAt(bytes, member.valueStart, member.valueEnd) : undefined;
    };
    const type = value("type") ?? (memberOf(object, "role") ? "message" : undefined);
    const blob = type === "reasoning" ? value("encrypted_content") : undefined;
    items.push({ index, type, id: value("id"), callId: type === "function_call" ? value("call_id") : undefined, blob: blob || undefined, element });
  }
  return items;
}

/**
 * One assistant turn's items as they go upstream. `layout` is the stored
 * turn's output in order (empty when replay gave this model none).
 */
function spliceTurn(plan: InputPlan, bytes: Buffer, items: ReadItem[], layout: readonly RecordItem[]): void {
  const wanted = layout.filter(isReasoning);
  const envelopes = items.filter((item) => item.type === "reasoning" && isCarrierEnvelope(item.blob));
  if (wanted.length === 0 && envelopes.length === 0) return; // most turns: as sent
  const present = new Set<ReasoningItem>();
  const matchOf = (item: ReadItem) =>
    wanted.find((entry) => (item.id !== undefined && entry.id === item.id) || (item.blob !== undefined && entry.encrypted_content === item.blob));
  for (const item of items) {
    if (item.type !== "reasoning") continue;
    const match = matchOf(item);
    if (item.blob !== undefined && !isCarrierEnvelope(item.blob)) {
      if (match) present.add(match); // the upstream's own blob, as the client kept it
      continue;
    }
    if (match && !present.has(match)) {
      plan.replace(item.index, [{ json: JSON.stringify(match) }]);
      present.add(match);
    } else if (isCarrierEnvelope(item.blob)) plan.replace(item.index, []);
  }

  // the stored reasoning the client left out goes before the item the turn had after it
  let placed = false;
  let matched = false;
  let pending: ReasoningItem[] = [];
  let cursor = 0;
  const others = items.filter((item) => item.type !== "reasoning");
  for (const entry of layout) {
    if (isReasoning(entry)) {
      if (!present.has(entry)) pending.push(entry);
      continue;
    }
    const at = others.findIndex(
      (item, position) => position >= cursor && item.type === entry.type && (entry.type !== "function_call" || item.callId === entry.call_id),
    );
    if (at < 0) continue;
    for (const reasoning of pending) plan.insertBefore(others[at].index, JSON.stringify(reasoning));
    placed ||= pending.length > 0;
    matched = true;
    pending = [];
    cursor = at + 1;
  }
  // a record none of whose items the client's turn holds: its reasoning opens the turn, when an item of the turn follows it
  const first = others[0];
  if (!matched && first) {
    const missing = wanted.filter((entry) => !present.has(entry));
    for (const reasoning of missing) plan.insertBefore(first.index, JSON.stringify(reasoning));
    placed = missing.length > 0;
  }
  if (envelopes.length === 0) return;
  // carrierd answered this turn (another route, or a continued chain): its function calls carry carrierd's item ids;
  // the upstream knows the stored turn's own, or none
  for (const item of others) {
    if (item.type !== "function_call" || item.id === undefined) continue;
    const stored = placed || present.size > 0 ? layout.find((entry) => entry.type === "function_call" && entry.call_id === item.callId) : undefined;
    const id = stored?.type === "function_call" ? stored.id : undefined;
    if (id === item.id) continue;
    const parsed = parseObject(bytes.toString("utf8", item.element.start, item.element.end));
    if (!parsed) continue;
    const { id: _carrierd, ...call } = parsed;
    plan.replace(item.index, [{ json: JSON.stringify(id === undefined ? call : { ...call, id }) }]);
  }
}

function isReasoning(item: RecordItem): item is ReasoningItem {
  return item.type === "reasoning";
}

function stringAt(bytes: Buffer, start: number, end: number): string | undefined {
  const value: unknown = JSON.parse(bytes.toString("utf8", start, end));
  return typeof value === "string" ? value : undefined;
}

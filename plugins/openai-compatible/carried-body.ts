import {
  arraySpan,
  type BodyPieces,
  type CarriedBody,
  type CarriedRequest,
  type ChatMessage,
  type ChatRequest,
  memberOf,
  type MemberSpan,
  objectSpan,
  type ObjectSpan,
  openCarriedBody,
  sameJson,
  spliceTopLevel,
  type UpstreamCall,
} from "../../src/providers/plugin-api.js";
import { applyReasoningControls } from "./reasoning-controls.js";
import { applyRequestNames } from "./request-names.js";

/** The reasoning carriers an assistant message holds itself (`extra_content` is on its tool calls). */
const MESSAGE_CARRIERS = ["reasoning_content", "reasoning", "reasoning_details"] as const;

/**
 * Top-level members carrierd may change in a carried chat body, besides the
 * model and what routes.yaml's `params` and `request_extra` name: its own
 * `model_options`, the reasoning controls and token limit a dialect spells,
 * and the tools `hosted_tools` leaves out.
 */
const OWNED_KEYS = [
  "model_options",
  "reasoning_effort",
  "reasoning",
  "thinking",
  "enable_thinking",
  "max_tokens",
  "max_completion_tokens",
  "tools",
  "tool_choice",
];

/**
 * A chat completions client's request on an OpenAI-compatible route, carried:
 * its bytes as it sent them, changed only where carrierd must
 * (docs/api.md#carried-chat-completions): the model the route maps; the
 * reasoning carriers of each earlier assistant message, exactly those
 * replay decided (`messages`: the call's messages with each tool call's
 * `extra_content` placed) — put back where the client dropped them, removed
 * where the route may not read them; and what routes.yaml sets for the
 * route: `models[].params`, `request_extra`, the dialect's names for the
 * reasoning controls, a `developer` message and the token limit, and the
 * hosted tools the route leaves out. Each such top-level member is what the
 * translated path would send for it; every other member, and every message
 * but for those carriers, keeps the client's bytes.
 */
export function carriedChatBody(call: UpstreamCall, carried: CarriedRequest, messages: readonly ChatMessage[]): Buffer | BodyPieces {
  const body = openCarriedBody(carried.bytes);
  spliceTopLevel(body, call.model, undefined);
  spliceOwnedMembers(body, call, carried);
  const list = memberOf(body.top, "messages");
  if (!list || body.bytes[list.valueStart] !== 0x5b) return body.splices.applied();
  const elements = arraySpan(body.bytes, list.valueStart).elements;
  // the call's messages are the client's, one for one (the door read them from these bytes)
  if (elements.length !== messages.length) throw new Error("a carried chat body's messages differ in number from the call's");
  const developerAsSystem = call.dialect.developerRole === "system";
  messages.forEach((message, index) => {
    const element = elements[index];
    if (body.bytes[element.start] !== 0x7b) return;
    if (message.role === "assistant") spliceCarriers(body, objectSpan(body.bytes, element.start), message);
    else if (message.role === "developer" && developerAsSystem) {
      const role = memberOf(objectSpan(body.bytes, element.start), "role");
      if (role) body.splices.replaceValue(role, '"system"');
    }
  });
  return body.splices.applied();
}

/** The top-level members carrierd owns or routes.yaml sets, each as the translated path would send it; the others are not touched. */
function spliceOwnedMembers(body: CarriedBody, call: UpstreamCall, carried: CarriedRequest): void {
  const keys = new Set([...OWNED_KEYS, ...Object.keys(carried.settings?.defaults ?? {}), ...Object.keys(carried.settings?.overrides ?? {})]);
  keys.delete("model");
  keys.delete("messages");
  // the call's body holds params, request_extra, the kept tools and no model_options; the dialect spells the rest
  const named = applyRequestNames({ ...call.body, messages: [] }, call.dialect);
  const sent: ChatRequest = applyReasoningControls(named, call.reasoning, call.dialect);
  const removed = new Set<MemberSpan>();
  for (const key of keys) {
    const member = memberOf(body.top, key);
    const value = sent[key];
    if (value === undefined) {
      if (member) removed.add(member);
    } else if (!member) body.splices.setMember(body.top, undefined, key, JSON.stringify(value));
    else if (!unchanged(body.bytes, member, value)) body.splices.replaceValue(member, JSON.stringify(value));
  }
  if (removed.size > 0) body.splices.removeMembers(body.top, removed);
}

/** Whether a member the client sent already holds `value`: tools only ever lose entries, so the same count is the same list. */
function unchanged(bytes: Buffer, member: MemberSpan, value: unknown): boolean {
  if (member.key === "tools" && Array.isArray(value) && bytes[member.valueStart] === 0x5b)
    return arraySpan(bytes, member.valueStart).elements.length === value.length;
  return sameJson(parsedAt(bytes, member), value);
}

/**
 * One assistant message's carriers as replay decided them: each carrier
 * member set to the call's value where it differs from the client's,
 * removed where the call has none; each tool call's `extra_content` the same.
 */
function spliceCarriers(body: CarriedBody, message: ObjectSpan, wire: ChatMessage): void {
  const { bytes, splices } = body;
  const removed = new Set<MemberSpan>();
  for (const field of MESSAGE_CARRIERS) {
    const member = memberOf(message, field);
    const value = wire[field];
    if (value === undefined) {
      if (member) removed.add(member);
    } else if (!member) splices.setMember(message, undefined, field, JSON.stringify(value));
    else if (!sameText(bytes, member, value)) splices.replaceValue(member, JSON.stringify(value));
  }
  // carrierd's own record key never goes upstream, whoever sent it
  const record = memberOf(message, "native_record");
  if (record) removed.add(record);
  const content = memberOf(message, "content");
  if (content && inlineCut(bytes, content, wire.content)) splices.replaceValue(content, JSON.stringify(wire.content ?? ""));
  if (removed.size > 0) splices.removeMembers(message, removed);
  const calls = memberOf(message, "tool_calls");
  if (!calls || bytes[calls.valueStart] !== 0x5b || !wire.tool_calls) return;
  arraySpan(bytes, calls.valueStart).elements.forEach((element, index) => {
    if (bytes[element.start] !== 0x7b) return;
    const call = objectSpan(bytes, element.start);
    const member = memberOf(call, "extra_content");
    const value = wire.tool_calls?.[index]?.extra_content;
    if (value === undefined) {
      if (member) splices.removeMembers(call, new Set([member]));
    } else if (!member) splices.setMember(call, undefined, "extra_content", JSON.stringify(value));
    else if (!sameJson(parsedAt(bytes, member), value)) splices.replaceValue(member, JSON.stringify(value));
  });
}

/**
 * Whether replay cut reasoning the client inlined out of this content
 * (`<think>…</think>`, Open WebUI's `<details type="reasoning">`): only a
 * content whose bytes hold a tag's first character can have lost one, so
 * any other is not compared.
 */
function inlineCut(bytes: Buffer, member: MemberSpan, value: unknown): boolean {
  const span = bytes.subarray(member.valueStart, member.valueEnd);
  if (span.indexOf(0x3c) < 0 && span.indexOf("◁") < 0) return false;
  return !sameText(bytes, member, value);
}

/** Whether the member's bytes hold `value`: a string compared as the text JSON writes it first (the common case), else parsed. */
function sameText(bytes: Buffer, member: MemberSpan, value: unknown): boolean {
  if (typeof value === "string") {
    const json = JSON.stringify(value);
    if (member.valueEnd - member.valueStart === Buffer.byteLength(json) && bytes.toString("utf8", member.valueStart, member.valueEnd) === json) return true;
  }
  return sameJson(parsedAt(bytes, member), value);
}

function parsedAt(bytes: Buffer, member: MemberSpan): unknown {
  return JSON.parse(bytes.toString("utf8", member.valueStart, member.valueEnd));
}

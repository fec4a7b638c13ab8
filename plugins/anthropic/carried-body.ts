import {
  arraySpan,
  memberOf,
  objectSpan,
  openCarriedBody,
  spliceTopLevel,
  type BodyPieces,
  type ArraySpan,
  type CarriedRequest,
  type ChatMessage,
  type ElementSpan,
  isAsSent,
  type MemberSpan,
  type UpstreamCall,
} from "../../src/providers/plugin-api.js";
import { readLayout, type LayoutBlock, type RedactedThinkingBlock, type ThinkingBlock } from "./content-layout.js";

/**
 * A Messages API client's request on an Anthropic route, carried: its bytes
 * as it sent them, changed only where carrierd must (docs/api.md#carried-requests):
 * the model the route maps (on Vertex AI the model goes into the URL and
 * `anthropic_version` into the body), the route's settings, and the thinking
 * of earlier assistant turns. Each assistant message holds exactly the
 * reasoning blocks replay decided for it (the message's `native_record` in
 * the call's body): the client's own blocks stay where they are, blocks the
 * store holds for a turn the client sent without them go back where they
 * were, and any other — carrierd's envelope of another route's turn, a block
 * another model signed — is left out: Anthropic refuses a signature it did
 * not issue.
 */
export function carriedMessagesBody(call: UpstreamCall, carried: CarriedRequest, vertex: boolean): Buffer | BodyPieces {
  const body = openCarriedBody(carried.bytes);
  spliceTopLevel(body, vertex ? undefined : call.model, carried.settings);
  if (vertex) body.splices.setMember(body.top, memberOf(body.top, "anthropic_version"), "anthropic_version", JSON.stringify("vertex-2023-10-16"));
  const messages = memberOf(body.top, "messages");
  const assistants = call.body.messages.filter((message) => message.role === "assistant");
  // each assistant message holds its reasoning blocks as the client sent them (the view's messages are the body's, in order):
  // none changes, and the messages are not read again
  if (messages && body.bytes[messages.valueStart] === 0x5b && !assistants.every((message) => isAsSent(message.native_record))) {
    let ordinal = 0;
    for (const element of arraySpan(body.bytes, messages.valueStart).elements) {
      if (body.bytes[element.start] !== 0x7b) continue;
      const message = objectSpan(body.bytes, element.start);
      const role = memberOf(message, "role");
      if (!role || !isAssistant(body.bytes, role)) continue;
      const canonical = assistants[ordinal++];
      if (canonical && isAsSent(canonical.native_record)) continue;
      const content = memberOf(message, "content");
      if (!canonical || !content || body.bytes[content.valueStart] !== 0x5b) continue;
      const keep = assistantContent(body.bytes, arraySpan(body.bytes, content.valueStart), canonical);
      if (keep) body.splices.rewriteArray(arraySpan(body.bytes, content.valueStart), keep);
    }
  }
  return body.splices.applied();
}

/** A role that says "assistant", as JSON.parse reads it (the view the canonical messages come from reads it so). */
function isAssistant(bytes: Buffer, role: MemberSpan): boolean {
  const raw = bytes.toString("utf8", role.valueStart, role.valueEnd);
  return raw === '"assistant"' || (raw.includes("\\") && stringAt(bytes, role.valueStart, role.valueEnd) === "assistant");
}

type Kept = number | { json: string };

/**
 * An assistant message's blocks as they go upstream: the client's (by
 * index) but its reasoning blocks the record does not hold, and the record's
 * reasoning blocks the client left out, placed before the block that
 * followed them when they were made. Undefined when nothing changes.
 */
function assistantContent(bytes: Buffer, content: ArraySpan, canonical: ChatMessage): Kept[] | undefined {
  const layout = readLayout(canonical.native_record) ?? [];
  const wanted = layout.filter(isReasoning);
  const blocks = content.elements.map((element) => readBlock(bytes, element));
  const sentReasoning = blocks.filter((block) => block.reasoning !== undefined);
  if (wanted.length === 0 && sentReasoning.length === 0) return undefined;
  const same = wanted.length === sentReasoning.length && wanted.every((block, index) => blockKey(block) === blockKey(sentReasoning[index].reasoning!));
  if (same) return undefined;

  // the client's blocks that stay: everything but reasoning the record does not hold
  const kept = new Set(wanted.map(blockKey));
  const present = new Set<string>();
  const clientBlocks: { index: number; block: ReadBlock }[] = [];
  blocks.forEach((block, index) => {
    if (block.reasoning === undefined) clientBlocks.push({ index, block });
    else if (kept.has(blockKey(block.reasoning))) {
      clientBlocks.push({ index, block });
      present.add(blockKey(block.reasoning));
    }
  });
  const missing = wanted.filter((block) => !present.has(blockKey(block)));
  if (missing.length === 0) return clientBlocks.map((entry) => entry.index);

  // the record's blocks the client left out go before the client block the layout has after them
  const before = new Map<number, LayoutBlock[]>();
  let pending: LayoutBlock[] = [];
  let cursor = 0;
  for (const entry of layout) {
    if (isReasoning(entry)) {
      if (!present.has(blockKey(entry))) pending.push(entry);
      continue;
    }
    const at = clientBlocks.findIndex(
      (candidate, position) => position >= cursor && candidate.block.type === entry.type && (entry.type !== "tool_use" || candidate.block.id === entry.id),
    );
    if (at < 0) continue;
    if (pending.length > 0) before.set(at, [...(before.get(at) ?? []), ...pending]);
    pending = [];
    cursor = at + 1;
  }
  const out: Kept[] = [];
  // a record that matched none of the client's blocks: its reasoning opens the turn, as Anthropic orders it
  const unplaced = before.size === 0 ? missing : pending;
  if (before.size === 0) out.push(...unplaced.map((block) => ({ json: JSON.stringify(block) })));
  clientBlocks.forEach((entry, position) => {
    for (const block of before.get(position) ?? []) out.push({ json: JSON.stringify(block) });
    out.push(entry.index);
  });
  if (before.size > 0) out.push(...unplaced.map((block) => ({ json: JSON.stringify(block) })));
  return out;
}

interface ReadBlock {
  readonly type: string | undefined;
  readonly id: string | undefined;
  /** A thinking or redacted_thinking block, parsed. */
  readonly reasoning: ThinkingBlock | RedactedThinkingBlock | undefined;
}

/** A block's type and id read from its bytes; only a reasoning block is parsed whole. */
function readBlock(bytes: Buffer, element: ElementSpan): ReadBlock {
  if (bytes[element.start] !== 0x7b) return { type: undefined, id: undefined, reasoning: undefined };
  const block = objectSpan(bytes, element.start);
  const typeMember = memberOf(block, "type");
  const type = typeMember ? stringAt(bytes, typeMember.valueStart, typeMember.valueEnd) : undefined;
  if (type === "thinking" || type === "redacted_thinking") {
    const parsed = JSON.parse(bytes.toString("utf8", element.start, element.end)) as ThinkingBlock | RedactedThinkingBlock;
    return { type, id: undefined, reasoning: parsed };
  }
  const idMember = type === "tool_use" ? memberOf(block, "id") : undefined;
  return { type, id: idMember ? stringAt(bytes, idMember.valueStart, idMember.valueEnd) : undefined, reasoning: undefined };
}

function stringAt(bytes: Buffer, start: number, end: number): string | undefined {
  if (bytes[start] !== 0x22) return undefined;
  const value: unknown = JSON.parse(bytes.toString("utf8", start, end));
  return typeof value === "string" ? value : undefined;
}

function isReasoning(block: LayoutBlock): block is ThinkingBlock | RedactedThinkingBlock {
  return block.type === "thinking" || block.type === "redacted_thinking";
}

/** What makes a signed block the same one: a thinking block's text and signature, a redacted block's data. */
function blockKey(block: ThinkingBlock | RedactedThinkingBlock): string {
  return block.type === "thinking" ? `thinking\n${String(block.signature)}\n${String(block.thinking)}` : `redacted\n${String(block.data)}`;
}

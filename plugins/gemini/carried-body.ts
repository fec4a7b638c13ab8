import {
  arraySpan,
  type BodyPieces,
  type ChatMessage,
  type CarriedBody,
  type CarriedRequest,
  type ElementSpan,
  type Json,
  isCarrierEnvelope,
  memberOf,
  type MemberSpan,
  objectSpan,
  type ObjectSpan,
  openCarriedBody,
  readObject,
  sameJson,
  spliceTopLevel,
  type UpstreamCall,
} from "../../src/providers/plugin-api.js";
import { readLayout, SKIP_SIGNATURE, type LayoutPart } from "./parts-layout.js";
import { validatesSignatures } from "./request-body.js";

/**
 * A Gemini API client's request on a Gemini route, carried: its bytes as it
 * sent them, changed only where carrierd must (docs/api.md#carried-requests):
 * the route's settings (the model is in the URL), and the thoughtSignatures
 * of earlier model turns. A model content whose signature the client dropped
 * gets the stored one back on its part (the record replay gave its message:
 * `native_record` in the call's body); a signature that is carrierd's own
 * envelope (sealed on another route) is taken off and never sent to Gemini,
 * the stored signature going where it was, or the documented skip value on
 * the first call of a turn Gemini would otherwise refuse. A signature Gemini
 * issued stays as the client sent it.
 */
export function carriedGenerateBody(call: UpstreamCall, carried: CarriedRequest): Buffer | BodyPieces {
  const body = openCarriedBody(carried.bytes);
  spliceTopLevel(body, undefined, carried.settings);
  const contents = memberOf(body.top, "contents");
  if (!contents || body.bytes[contents.valueStart] !== 0x5b) return body.splices.applied();
  const assistants = call.body.messages.filter((message) => message.role === "assistant");
  const strict = validatesSignatures(call.model);
  let ordinal = 0;
  for (const element of arraySpan(body.bytes, contents.valueStart).elements) {
    if (body.bytes[element.start] !== 0x7b) continue;
    const content = objectSpan(body.bytes, element.start);
    const role = memberOf(content, "role");
    if (!role || body.bytes.toString("utf8", role.valueStart, role.valueEnd) !== '"model"') continue;
    const canonical = assistants[ordinal++];
    const parts = memberOf(content, "parts");
    if (!canonical || !parts || body.bytes[parts.valueStart] !== 0x5b) continue;
    spliceModelParts(body, parts, canonical, strict);
  }
  return body.splices.applied();
}

/** One of the client's parts, read from its bytes: its signature, and what matches it to a stored part. */
interface ReadPart {
  readonly span: ObjectSpan;
  readonly signature: MemberSpan | undefined;
  readonly signatureValue: string | undefined;
  readonly thought: boolean;
  readonly call: { id: string | undefined; args: Json } | undefined;
  readonly text: string | undefined;
}

/**
 * A model content's parts: each stored signature the client left out goes
 * back on the part it was issued with (a call by its id or its place among
 * the calls, text by its text, signed thoughts at the front of a content
 * with no signature of Gemini's), and an envelope of carrierd's comes off.
 */
function spliceModelParts(body: CarriedBody, partsMember: MemberSpan, canonical: ChatMessage, strict: boolean): void {
  const { bytes, splices } = body;
  const elements = arraySpan(bytes, partsMember.valueStart).elements;
  const signatures = elements.map((element) => signatureOf(bytes, element));
  const layout = readLayout(canonical.native_record) ?? [];
  const sent = new Set(signatures.map((signature) => signature?.value));
  const hasEnvelope = signatures.some((signature) => isCarrierEnvelope(signature?.value));
  // a client that sends Gemini's signatures back keeps the ones that matter itself; the thought summaries it leaves out are its choice (Gemini CLI's)
  const clientSigned = signatures.some((signature) => signature?.value !== undefined && !isCarrierEnvelope(signature.value));
  const missing = (part: LayoutPart) => part.thoughtSignature !== undefined && !sent.has(part.thoughtSignature) && !(part.type === "thought" && clientSigned);
  if (!hasEnvelope && !layout.some(missing)) return; // most requests: as sent
  if (elements.some((element) => bytes[element.start] !== 0x7b)) return; // a part that is not an object: Gemini judges the content as sent

  const parts = elements.map((element) => readPart(bytes, element));
  const unsigned = (part: ReadPart) => part.signature === undefined || isCarrierEnvelope(part.signatureValue);
  const calls = parts.filter((part) => part.call !== undefined);
  const signed = new Map<ReadPart, string>();
  const thoughts: Extract<LayoutPart, { type: "thought" }>[] = [];
  let callOrdinal = 0;
  for (const entry of layout) {
    const position = entry.type === "function_call" ? callOrdinal++ : -1;
    if (!missing(entry)) continue;
    if (entry.type === "function_call") {
      const part = entry.native_id ? calls.find((candidate) => candidate.call!.id === entry.id) : calls[position];
      // Gemini binds a signature to the call it signed: arguments the client reshaped take none
      if (part && unsigned(part) && !signed.has(part) && (entry.args === undefined || sameJson(part.call!.args, entry.args)))
        signed.set(part, entry.thoughtSignature!);
    } else if (entry.type === "text") {
      const part = parts.find((candidate) => !candidate.thought && candidate.text === entry.text && unsigned(candidate) && !signed.has(candidate));
      if (part) signed.set(part, entry.thoughtSignature!);
    } else thoughts.push(entry);
  }
  // a turn whose calls lost carrierd's envelope and got no signature back: Gemini 3 refuses unsigned calls
  const callSigned = calls.some((part) => signed.has(part) || !unsigned(part));
  if (strict && hasEnvelope && calls.length > 0 && !callSigned) signed.set(calls[0], SKIP_SIGNATURE);

  for (const part of parts) {
    const signature = signed.get(part);
    if (signature !== undefined) splices.setMember(part.span, part.signature, "thoughtSignature", JSON.stringify(signature));
    else if (part.signature && isCarrierEnvelope(part.signatureValue)) splices.removeMembers(part.span, new Set([part.signature]));
  }
  if (thoughts.length > 0 && !parts.some((part) => part.thought)) {
    const text = thoughts.map((part) => JSON.stringify({ text: part.text, thought: true, thoughtSignature: part.thoughtSignature })).join(",");
    const at = elements[0]?.start ?? partsMember.valueStart + 1;
    splices.insert(at, elements.length > 0 ? `${text},` : text);
  }
}

/** A part's thoughtSignature, when it is an object with one; read without reading the rest of the part. */
function signatureOf(bytes: Buffer, element: ElementSpan): { value: string | undefined } | undefined {
  if (bytes[element.start] !== 0x7b) return undefined;
  const member = memberOf(objectSpan(bytes, element.start), "thoughtSignature");
  return member ? { value: stringAt(bytes, member) } : undefined;
}

function readPart(bytes: Buffer, element: ElementSpan): ReadPart {
  const span = objectSpan(bytes, element.start);
  const signature = memberOf(span, "thoughtSignature");
  const thought = memberOf(span, "thought");
  const call = memberOf(span, "functionCall");
  const text = memberOf(span, "text");
  const parsedCall = call ? readObject(JSON.parse(bytes.toString("utf8", call.valueStart, call.valueEnd))) : undefined;
  return {
    span,
    signature,
    signatureValue: signature ? stringAt(bytes, signature) : undefined,
    thought: thought !== undefined && bytes.toString("utf8", thought.valueStart, thought.valueEnd) === "true",
    call: parsedCall ? { id: typeof parsedCall.id === "string" ? parsedCall.id : undefined, args: parsedCall.args ?? {} } : undefined,
    text: text ? stringAt(bytes, text) : undefined,
  };
}

function stringAt(bytes: Buffer, member: MemberSpan): string | undefined {
  if (bytes[member.valueStart] !== 0x22) return undefined;
  const value: unknown = JSON.parse(bytes.toString("utf8", member.valueStart, member.valueEnd));
  return typeof value === "string" ? value : undefined;
}

import type { Envelopes, SealedCarriers } from "../../routing/carriers/envelope.js";
import type { Logger } from "../../foundation/logging/logger.js";
import type { ChatMessage, JsonObject } from "../../providers/contract.js";
import type { NewTurn, ReplaySource } from "../../storage/turns.js";
import type { OutputSink } from "./output-builder.js";
import type { ResponsesRequest } from "./request.js";
import { readObject } from "../../foundation/util/json-readers.js";

/** Whether the request asked for `reasoning.encrypted_content` (docs/api.md#encrypted-reasoning). */
export function wantsEncryptedContent(request: ResponsesRequest): boolean {
  return Array.isArray(request.include) && request.include.includes("reasoning.encrypted_content");
}

/** The carriers of a stored turn as an envelope holds them. */
export function carriersOf(turn: NewTurn): SealedCarriers {
  return {
    id: turn.id,
    sessionId: turn.sessionId,
    plugin: turn.plugin,
    provider: turn.provider,
    upstreamModel: turn.upstreamModel,
    reasoningText: turn.reasoningText,
    reasoningDetails: turn.reasoningDetails as SealedCarriers["reasoningDetails"],
    nativeRecord: turn.nativeRecord,
  };
}

/** Sets `encrypted_content` on every reasoning item of `items` (the same objects: a held event that lists one carries it too). */
export function sealReasoningItems(items: readonly JsonObject[], envelope: string): void {
  for (const item of items) if (item.type === "reasoning") item.encrypted_content = envelope;
}

type HeldEvent =
  { readonly type: string; readonly fields: JsonObject; readonly head?: undefined } | { readonly type: string; readonly head: string; readonly delta: string };

/**
 * A stream whose reasoning items carry the turn's envelope: each reasoning
 * item is sealed as it ends, with the reasoning so far. From its
 * `response.output_item.done` on, events are held only until that seal is
 * done (a moment: `release`), so what follows streams live. Carriers that
 * arrive later (a native record's signatures, `reasoning_details`) go in
 * one more reasoning item after the output (ResponseStream.finish).
 */
export class SealingSink implements OutputSink {
  private held: HeldEvent[] | undefined;
  /** The envelope each reasoning item went out with, by its id: the final Response lists the same. */
  readonly sealedItems = new Map<string, string>();

  constructor(private readonly sink: OutputSink) {}

  /** Whether a reasoning item has ended and waits for its envelope. */
  get holding(): boolean {
    return this.held !== undefined;
  }

  emit(type: string, fields: JsonObject): void {
    if (!this.held && type === "response.output_item.done" && readObject(fields.item)?.type === "reasoning") this.held = [];
    if (this.held) this.held.push({ type, fields });
    else this.sink.emit(type, fields);
  }

  emitDelta(type: string, head: string, delta: string): void {
    if (this.held) this.held.push({ type, head, delta });
    else this.sink.emitDelta(type, head, delta);
  }

  /** Sends what was held, every reasoning item in it sealed with `envelope` (undefined: as it was, for a failed turn or a seal that failed). */
  release(envelope: string | undefined): void {
    const held = this.held ?? [];
    this.held = undefined;
    for (const event of held) {
      if (event.head !== undefined) {
        this.sink.emitDelta(event.type, event.head, event.delta);
        continue;
      }
      const item = readObject(event.fields.item);
      if (envelope && event.type === "response.output_item.done" && item?.type === "reasoning") {
        item.encrypted_content = envelope;
        if (typeof item.id === "string") this.sealedItems.set(item.id, envelope);
      }
      this.sink.emit(event.type, event.fields);
    }
  }
}

/** A request whose reasoning items carried no envelope of ours (most requests). */
export const NOTHING_SEALED: ReadonlyMap<ChatMessage, SealedCarriers> = new Map();

/**
 * The envelopes a request's reasoning items carried, opened: carriers by
 * the assistant message they belong to. One that does not open (altered,
 * expired, another key's or another deployment's) is left out and said at
 * debug: that message's carriers come from the store, as without one.
 */
export async function openEnvelopes(
  envelopes: Envelopes,
  found: ReadonlyMap<ChatMessage, string>,
  keyHash: string,
  log: Logger,
): Promise<Map<ChatMessage, SealedCarriers>> {
  const opened = new Map<ChatMessage, SealedCarriers>();
  for (const [message, envelope] of found) {
    const result = await envelopes.openWithReason(envelope, keyHash);
    if (result.carriers) opened.set(message, result.carriers);
    else log.debug({ reason: result.refused }, "encrypted_content ignored: replay falls back to the stored turn");
  }
  return opened;
}

/** Opened carriers by index of their message in the chat request that goes upstream. */
export function sealedByIndex(messages: readonly ChatMessage[], opened: ReadonlyMap<ChatMessage, SealedCarriers>): Map<number, ReplaySource> | undefined {
  if (opened.size === 0) return undefined;
  const sealed = new Map<number, ReplaySource>();
  messages.forEach((message, index) => {
    const carriers = opened.get(message);
    if (carriers) sealed.set(index, carriers);
  });
  return sealed;
}

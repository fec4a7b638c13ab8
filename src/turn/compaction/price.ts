import type { ChatRequest } from "../../providers/contract.js";

/**
 * THE pricing function of compaction: estimated tokens of a JSON value as it
 * goes upstream, one token per four UTF-8 bytes. The pre-flight estimate and
 * the tail walk both price the same wire messages with it, carriers
 * included — an encrypted `reasoning_details` blob or a native record costs
 * the same in both — so the tail the walk keeps is exactly what the next
 * estimate counts, and one compaction converges (hermes-agent, https://github.com/NousResearch/hermes-agent,
 * once counted stale thinking in one and not the other: its issue #84371).
 * Bytes, not characters: CJK text costs more than ASCII, as it does upstream.
 */
export function priceJson(value: unknown): number {
  return Math.ceil(Buffer.byteLength(JSON.stringify(value) ?? "", "utf8") / 4);
}

/** A wire body priced per message, and everything else (tools, params, model) as one sum. */
export interface PricedRequest {
  readonly messages: number[];
  readonly rest: number;
  readonly total: number;
}

export function priceRequest(body: ChatRequest): PricedRequest {
  const { messages, ...rest } = body;
  const perMessage = messages.map(priceJson);
  const restPrice = priceJson(rest);
  return { messages: perMessage, rest: restPrice, total: perMessage.reduce((sum, cost) => sum + cost, restPrice) };
}

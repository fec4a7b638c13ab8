import { isEnvelope, type Envelopes, type SealedCarriers } from "../../routing/carriers/envelope.js";
import type { Logger } from "../../foundation/logging/logger.js";
import type { ChatMessage } from "../../providers/contract.js";
import { carriersOf } from "../responses/sealed-reasoning.js";
import type { ResolvedModel } from "../../routing/routes/route-table.js";
import type { NewTurn, ReplaySource } from "../../storage/turns.js";
import type { AnthropicMessage } from "./request.js";

/**
 * The `signature` of the thinking blocks of a turn carrierd answered on a
 * route that is not Anthropic's: the sealed envelope of the turn's carriers
 * (src/routing/carriers/envelope.ts), for the access key's data scope: as stored
 * once the turn ends, or as far as they have arrived when a block ends.
 * Every signature carrierd writes comes from here; openThinkingSignatures
 * reads them back.
 */
export function thinkingSignature(envelopes: Envelopes, turn: NewTurn | SealedCarriers, keyHash: string): Promise<string> {
  return envelopes.seal("keyHash" in turn ? carriersOf(turn) : turn, keyHash);
}

/**
 * The carriers the thinking blocks a client sent back hold, by index of
 * their assistant message in the turn request (`canonical`): the last
 * envelope of each message, when it opens for this key and was sealed for
 * this route's model (a later block's envelope holds the reasoning of the
 * ones before it too). Another model's or provider's is never sent here (signed
 * reasoning is bound to its model), nor is one that does not open
 * (Anthropic's own signatures, altered, expired, another key's): that
 * message's carriers come from the store, found as for any stateless client.
 */
export async function openThinkingSignatures(
  envelopes: Envelopes,
  messages: readonly AnthropicMessage[],
  canonical: readonly ChatMessage[],
  resolved: ResolvedModel,
  keyHash: string,
  log: Logger,
): Promise<Map<number, ReplaySource> | undefined> {
  if (!messages.some(hasThinkingBlock)) return undefined; // most requests: nothing to open
  const assistantIndexes = canonical.flatMap((message, index) => (message.role === "assistant" ? [index] : []));
  let opened: Map<number, ReplaySource> | undefined;
  let ordinal = 0;
  for (const message of messages) {
    if (message.role !== "assistant") continue;
    const index = assistantIndexes[ordinal++];
    if (index === undefined || typeof message.content === "string") continue;
    // Only the message's last envelope is opened: it holds the reasoning of the blocks before it, so one open per
    // message is all a client's own history needs, and a message of forged signatures costs one failed open, not one
    // per block. An Anthropic signature (or any other not of ours) is passed over without a turn of the event loop.
    const signature = lastEnvelope(message.content);
    if (signature === undefined) continue;
    const result = await envelopes.openWithReason(signature, keyHash);
    if (!result.carriers) continue; // altered, expired, another key's: the store decides
    const producer = { plugin: result.carriers.plugin, model: result.carriers.upstreamModel };
    if (!resolved.family.sameProducer(producer, { plugin: resolved.provider.plugin, model: resolved.upstreamModel })) {
      log.debug({ produced_by: producer, route: resolved.upstreamModel }, "thinking block sealed for another model: not sent to this one");
      continue;
    }
    (opened ??= new Map()).set(index, result.carriers);
  }
  return opened;
}

/** The signature of the last thinking block that carries one of carrierd's envelopes, if any. */
function lastEnvelope(blocks: readonly { type: string; signature?: unknown }[]): string | undefined {
  for (let position = blocks.length - 1; position >= 0; position--) {
    const block = blocks[position];
    if (block.type === "thinking" && isEnvelope(block.signature)) return block.signature;
  }
  return undefined;
}

function hasThinkingBlock(message: AnthropicMessage): boolean {
  return message.role === "assistant" && typeof message.content !== "string" && message.content.some((block) => block.type === "thinking");
}

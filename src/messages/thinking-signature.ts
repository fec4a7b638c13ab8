import type { Envelopes } from "../carriers/envelope.js";
import type { Logger } from "../logging/logger.js";
import type { ChatMessage } from "../plugins/contract.js";
import { carriersOf } from "../responses/sealed-reasoning.js";
import type { ResolvedModel } from "../routes/route-table.js";
import type { NewTurn, ReplaySource } from "../storage/turns.js";
import type { AnthropicMessage } from "./request.js";

/**
 * The `signature` of the thinking blocks of a turn carrierd answered on a
 * route that is not Anthropic's: the sealed envelope of the turn's carriers
 * as stored (src/carriers/envelope.ts), for the access key's data scope.
 * Every signature carrierd writes comes from here; openThinkingSignatures
 * reads them back.
 */
export function thinkingSignature(envelopes: Envelopes, turn: NewTurn, keyHash: string): Promise<string> {
  return envelopes.seal(carriersOf(turn), keyHash);
}

/**
 * The carriers the thinking blocks a client sent back hold, by index of
 * their assistant message in the turn request (`canonical`): the first
 * signature of each message that opens for this key and was sealed for this
 * route's model. Another model's or provider's is never sent here (signed
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
  const assistantIndexes = canonical.flatMap((message, index) => (message.role === "assistant" ? [index] : []));
  let opened: Map<number, ReplaySource> | undefined;
  let ordinal = 0;
  for (const message of messages) {
    if (message.role !== "assistant") continue;
    const index = assistantIndexes[ordinal++];
    if (index === undefined || typeof message.content === "string") continue;
    for (const block of message.content) {
      if (block.type !== "thinking" || typeof block.signature !== "string" || block.signature === "") continue;
      const result = await envelopes.openWithReason(block.signature, keyHash);
      if (!result.carriers) continue; // not carrierd's (an Anthropic signature), or refused: the store decides
      const producer = { plugin: result.carriers.plugin, model: result.carriers.upstreamModel };
      if (!resolved.family.sameProducer(producer, { plugin: resolved.provider.plugin, model: resolved.upstreamModel })) {
        log.debug({ produced_by: producer, route: resolved.upstreamModel }, "thinking block sealed for another model: not sent to this one");
        break;
      }
      (opened ??= new Map()).set(index, result.carriers);
      break;
    }
  }
  return opened;
}

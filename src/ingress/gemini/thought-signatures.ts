import { isEnvelope, type Envelopes } from "../../routing/carriers/envelope.js";
import type { Logger } from "../../foundation/logging/logger.js";
import type { ChatMessage } from "../../providers/contract.js";
import type { ResolvedModel } from "../../routing/routes/route-table.js";
import type { ReplaySource } from "../../storage/turns.js";
import type { GeminiContent } from "./request.js";

/**
 * The carriers the thoughtSignatures a client sent back hold, by index of
 * their assistant message in the turn request (`canonical`): the signature
 * of each model content that opens for this key and was sealed for this
 * route's model. carrierd writes one envelope per turn (on its first
 * function call, or its last part), so the last that opens is the turn's.
 * Another model's or provider's is never sent here (signed reasoning is
 * bound to its model), nor is one that does not open (Gemini's own
 * signatures, altered, expired, another key's): that message's carriers
 * come from the store, found as for any stateless client.
 */
export async function openThoughtSignatures(
  envelopes: Envelopes,
  contents: readonly GeminiContent[],
  canonical: readonly ChatMessage[],
  resolved: ResolvedModel,
  keyHash: string,
  log: Logger,
): Promise<Map<number, ReplaySource> | undefined> {
  if (!contents.some(hasEnvelope)) return undefined; // most requests: nothing to open
  const assistantIndexes = canonical.flatMap((message, index) => (message.role === "assistant" ? [index] : []));
  let opened: Map<number, ReplaySource> | undefined;
  let ordinal = 0;
  for (const content of contents) {
    if (content.role !== "model") continue;
    const index = assistantIndexes[ordinal++];
    if (index === undefined) continue;
    for (let position = content.parts.length - 1; position >= 0; position--) {
      const signature = content.parts[position].thoughtSignature;
      if (!isEnvelope(signature)) continue;
      const result = await envelopes.openWithReason(signature, keyHash);
      if (!result.carriers) continue;
      const producer = { plugin: result.carriers.plugin, model: result.carriers.upstreamModel };
      if (!resolved.family.sameProducer(producer, { plugin: resolved.provider.plugin, model: resolved.upstreamModel })) {
        log.debug({ produced_by: producer, route: resolved.upstreamModel }, "thought signature sealed for another model: not sent to this one");
        break;
      }
      (opened ??= new Map()).set(index, result.carriers);
      break;
    }
  }
  return opened;
}

function hasEnvelope(content: GeminiContent): boolean {
  return content.role === "model" && content.parts.some((part) => isEnvelope(part.thoughtSignature));
}

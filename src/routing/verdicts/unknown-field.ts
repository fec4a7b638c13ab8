import { CARRIER_FIELDS, isCarrierField, type CarrierField, type ChatMessage } from "../../providers/contract.js";

/** The carrier fields present on the assistant messages of an upstream request (`extra_content`: on any of their tool calls). */
export function sentCarrierFields(messages: readonly ChatMessage[]): CarrierField[] {
  const sent = new Set<CarrierField>();
  for (const message of messages) {
    if (message.role !== "assistant") continue;
    for (const field of CARRIER_FIELDS)
      if (field === "extra_content" ? message.tool_calls?.some((call) => call.extra_content !== undefined) : message[field] !== undefined) sent.add(field);
  }
  return CARRIER_FIELDS.filter((field) => sent.has(field));
}

/**
 * Which fields to record after the classifier named `named` (docs/sessions-and-replay.md#unknown-field-fallback-verdicts;
 * widening as hermes-agent does it): `reasoning_content` named → every carrier the
 * failing request sent; `reasoning` or `reasoning_details` named → those two,
 * where sent. On a must-echo route `reasoning_content` is required, so a
 * complaint naming it is about its value: nothing is recorded, no retry.
 * Only fields not already rejected count, so a retry cannot loop.
 */
export function fieldsToReject(
  named: string | undefined,
  sent: readonly CarrierField[],
  mustEcho: boolean,
  alreadyRejected: readonly CarrierField[],
): CarrierField[] {
  if (!isCarrierField(named) || !sent.includes(named)) return [];
  if (named === "reasoning_content" && mustEcho) return [];
  const widened = named === "reasoning_content" ? sent : sent.filter((field) => field === "reasoning" || field === "reasoning_details");
  return widened.filter((field) => !(mustEcho && field === "reasoning_content") && !alreadyRejected.includes(field));
}

import type { AssistantTurn } from "../../routing/carriers/turn-accumulator.js";

/** What names one completion: its id, when it was created, the model the client asked for. */
export interface CompletionIdentity {
  readonly id: string;
  readonly created: number;
  readonly model: string;
}

/** The `chat.completion` object of an answer sent whole (docs/api.md#post-v1chatcompletions). */
export function completionObject(turn: AssistantTurn, identity: CompletionIdentity): object {
  const message: Record<string, unknown> = { role: "assistant", content: turn.content.length > 0 || turn.toolCalls.length === 0 ? turn.content : null };
  if (turn.reasoningText) message.reasoning_content = turn.reasoningText;
  if (turn.toolCalls.length > 0) message.tool_calls = turn.toolCalls;
  return {
    id: identity.id,
    object: "chat.completion",
    created: identity.created,
    model: identity.model,
    ...servedAs(turn),
    choices: [{ index: 0, message, logprobs: turn.logprobs ? { content: turn.logprobs } : null, finish_reason: turn.finishReason, ...stopReasonOf(turn) }],
    usage: turn.usage ?? null,
  };
}

/** How the upstream says it served the answer, in OpenAI's names: `service_tier`, `system_fingerprint` (docs/api.md#across-wires). */
export function servedAs(turn: AssistantTurn): { service_tier?: string; system_fingerprint?: string } {
  return {
    ...(turn.serviceTier !== undefined && { service_tier: turn.serviceTier }),
    ...(turn.systemFingerprint !== undefined && { system_fingerprint: turn.systemFingerprint }),
  };
}

/**
 * The stop sequence that ended the answer, when the upstream named it, as
 * vLLM and SGLang report it on a choice (`stop_reason`): OpenAI's chat
 * completions have no field for it.
 */
function stopReasonOf(turn: AssistantTurn): { stop_reason?: string } {
  return turn.stopSequence === undefined ? {} : { stop_reason: turn.stopSequence };
}

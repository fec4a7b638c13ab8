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
    choices: [{ index: 0, message, logprobs: null, finish_reason: turn.finishReason }],
    usage: turn.usage ?? null,
  };
}

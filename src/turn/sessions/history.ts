import type { ChatMessage } from "../../providers/contract.js";
import type { StoredTurn } from "../../storage/turns.js";

/**
 * A session's conversation as a client resends it: each turn's prompt
 * messages, then the assistant message as clients keep it (text and tool
 * calls, no reasoning — the daemon replays that). Follows the parent chain
 * back from the newest turn, so a client that regenerated an answer resumes
 * the branch it last continued.
 */
export function historyOf(turns: readonly StoredTurn[], prompts: readonly ChatMessage[][]): ChatMessage[] {
  if (turns.length === 0) return [];
  const byId = new Map(turns.map((turn, index) => [turn.id, index]));
  const chain: number[] = [];
  for (let index: number | undefined = turns.length - 1; index !== undefined && !chain.includes(index);) {
    chain.unshift(index);
    const parent: string | null = turns[index].parentTurnId;
    index = parent === null ? undefined : byId.get(parent);
  }
  // a chain that does not reach turn 1 (parents lost by an older writer) falls back to positions
  const order = chain[0] === 0 ? chain : turns.map((_turn, index) => index);
  const messages: ChatMessage[] = [];
  for (const index of order) {
    const turn = turns[index];
    messages.push(...prompts[index]);
    const assistant: ChatMessage = { role: "assistant", content: turn.content.length > 0 || turn.toolCalls.length === 0 ? turn.content : null };
    if (turn.toolCalls.length > 0) assistant.tool_calls = turn.toolCalls;
    messages.push(assistant);
  }
  return messages;
}

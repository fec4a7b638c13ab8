import type { ChatMessage } from "../../providers/contract.js";
import type { Checkpoint } from "../../storage/checkpoints.js";

/** One message of the history a request sends, and where it sits in the chain's full history (-1: a summary). */
export interface ViewEntry {
  readonly message: ChatMessage;
  readonly index: number;
}

export const SUMMARY_INDEX = -1;

/**
 * The history as it goes upstream: the full chain history, or — under a
 * checkpoint — its head, the summary, and everything from the cut on. Kept
 * messages are the stored objects themselves, so nothing about them changes.
 */
export function applyCheckpoint(history: readonly ChatMessage[], checkpoint: Checkpoint | undefined): ViewEntry[] {
  const all = history.map((message, index) => ({ message, index }));
  // a checkpoint that does not fit this history (it cannot, along one chain) is ignored, not trusted
  if (!checkpoint || checkpoint.headCount > checkpoint.cutIndex || checkpoint.cutIndex > history.length) return all;
  return [...all.slice(0, checkpoint.headCount), { message: summaryMessage(checkpoint.summary), index: SUMMARY_INDEX }, ...all.slice(checkpoint.cutIndex)];
}

/**
 * The checkpoint as a message. A user message, never an assistant one: an
 * assistant message would be matched to a stored turn by position and get
 * some turn's reasoning attached; a user message carries no carriers.
 */
export function summaryMessage(summary: string): ChatMessage {
  return { role: "user", content: `${SUMMARY_PREFIX}\n\n${summary}` };
}

export const SUMMARY_PREFIX = "[Summary of the earlier conversation, written by carrierd to fit the context window. The messages it replaces are archived.]";

import type { Json } from "../plugins/contract.js";

/** The carriers a thinking block stands for: the reasoning of one turn as its route reads it, and who produced it. */
export interface ThinkingCarriers {
  /** The plugin and upstream model that produced them: a block is sent back only to the same producer (docs/api.md#messages-api). */
  readonly plugin: string;
  readonly upstreamModel: string;
  readonly reasoningText: string;
  readonly reasoningDetails?: readonly Json[];
}

/**
 * The `signature` of a thinking block carrierd streams from a route that is
 * not Anthropic's. Every signature carrierd writes comes from here, and
 * every one a client sends back is read by openThinkingSignature.
 *
 * Until the sealed envelope of a turn's carriers is wired in, the signature
 * is empty and opens to nothing: a client that sends its thinking blocks
 * back gets its turn's reasoning from the stored turn (found by its text and
 * tool calls, as for any stateless client), never from the block.
 */
export function thinkingSignature(_carriers: ThinkingCarriers, _keyHash: string): string {
  return "";
}

/** The carriers a client's thinking block signature holds for this key; undefined for one carrierd did not seal for it. */
export function openThinkingSignature(_signature: string, _keyHash: string): ThinkingCarriers | undefined {
  return undefined;
}

import { GatewayError } from "../foundation/errors/gateway-error.js";
import type { ChatMessage } from "../providers/contract.js";

/** The most messages (input items) one request may carry, on every door. */
export const MAX_INPUT_ITEMS = 100_000;
/** The most content parts (blocks) one message may carry, on every door. */
export const MAX_CONTENT_PARTS = 1000;

/**
 * The one rule every wire API's list of messages follows (docs/api.md#one-input-rule):
 * not empty, at most MAX_INPUT_ITEMS, each message's content list at most
 * MAX_CONTENT_PARTS. `param` names the list as the door calls it
 * (`messages`, `input`); a list that is not there is the schema's to judge.
 */
export function checkInputList(body: Record<string, unknown>, param: string): void {
  const list = body[param];
  if (!Array.isArray(list)) return;
  if (list.length === 0) throw new GatewayError("invalid_request", `'${param}' must not be empty`, param);
  if (list.length > MAX_INPUT_ITEMS)
    throw new GatewayError("invalid_request", `'${param}' must have at most ${MAX_INPUT_ITEMS} items, got ${list.length}`, param);
  for (let i = 0; i < list.length; i++) {
    const content = (list[i] as { content?: unknown } | null)?.content;
    if (Array.isArray(content) && content.length > MAX_CONTENT_PARTS) {
      throw new GatewayError(
        "invalid_request",
        `'${param}[${i}].content' must have at most ${MAX_CONTENT_PARTS} parts, got ${content.length}`,
        `${param}[${i}].content`,
      );
    }
  }
}

/**
 * What a plugin is handed always holds a message: a request whose history
 * came out empty (a door's conversion, a continuation that held nothing) is
 * a 400 here rather than a plugin's TypeError or an upstream's guess.
 */
export function requireHistory(messages: readonly ChatMessage[]): void {
  if (messages.length === 0) throw new GatewayError("invalid_request", "the request holds no message to answer", "messages");
}

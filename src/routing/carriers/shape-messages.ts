import { CARRIER_FIELDS, type CarrierField, type CarrierPolicy, type ChatMessage, type ToolCall } from "../../providers/contract.js";

/** The `must_echo` placeholder: a single space, never "" (DeepSeek V4 rejects the empty string). */
export const ECHO_PLACEHOLDER = " ";

/**
 * Builds the wire messages for one route (docs/sessions-and-replay.md#replay-rules, rules 2–5): every carrier
 * field that is not effective is stripped, including ones the client sent
 * (`extra_content` from each tool call); `must_echo` tool-call turns with no
 * reasoning get the placeholder. The input history is never modified; a
 * message is copied only when it changes.
 */
export function shapeMessages(messages: readonly ChatMessage[], policy: CarrierPolicy, effective: readonly CarrierField[] = policy.fields): ChatMessage[] {
  const echo = policy.mustEcho && effective.includes("reasoning_content");
  const keepExtra = effective.includes("extra_content");
  return messages.map((message) => {
    if (message.role !== "assistant") return message;
    let shaped: ChatMessage | undefined;
    for (const field of CARRIER_FIELDS) {
      if (field in message && !effective.includes(field)) {
        shaped ??= { ...message };
        delete shaped[field];
      }
    }
    if (!keepExtra && message.tool_calls?.some((call) => "extra_content" in call)) (shaped ??= { ...message }).tool_calls = withoutExtra(message.tool_calls);
    const current = shaped ?? message;
    if (echo && current.tool_calls?.length && !(typeof current.reasoning_content === "string" && current.reasoning_content.length > 0)) {
      (shaped ??= { ...message }).reasoning_content = ECHO_PLACEHOLDER;
    }
    return shaped ?? message;
  });
}

function withoutExtra(calls: readonly ToolCall[]): ToolCall[] {
  return calls.map((call) => {
    if (!("extra_content" in call)) return call;
    const { extra_content: _dropped, ...rest } = call;
    return rest;
  });
}

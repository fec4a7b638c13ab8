import type { ChatMessage, ChatRequest, RequestDialect } from "../../src/providers/plugin-api.js";

/**
 * Two names of OpenAI's chat API that not every OpenAI-style host knows,
 * re-spelled as the host's dialect says: a `developer` message (OpenAI's
 * newer name for `system`; DeepSeek, Mistral and local servers know only
 * `system`) and the output-token limit (`max_completion_tokens`, which
 * OpenAI's reasoning models require, or `max_tokens`, the one most others
 * read). Returns `body` itself when nothing changes; never modifies it.
 */
export function applyRequestNames(body: ChatRequest, dialect: RequestDialect): ChatRequest {
  const other = dialect.tokenLimit === "max_tokens" ? "max_completion_tokens" : "max_tokens";
  const renameLimit = body[other] !== undefined;
  const messages = dialect.developerRole === "system" ? withoutDeveloper(body.messages) : body.messages;
  if (!renameLimit && messages === body.messages) return body;
  const out: ChatRequest = { ...body, messages };
  if (renameLimit) {
    // both sent: the host's own name wins, since a host that reads both refuses a request that sets both
    if (out[dialect.tokenLimit] === undefined) out[dialect.tokenLimit] = out[other];
    delete out[other];
  }
  return out;
}

/** `messages` with each `developer` message sent as `system`: the same array when there is none. */
function withoutDeveloper(messages: ChatMessage[]): ChatMessage[] {
  let out: ChatMessage[] | undefined;
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index];
    if (message.role !== "developer") continue;
    out ??= messages.slice();
    out[index] = { ...message, role: "system" };
  }
  return out ?? messages;
}

import chatSchema from "../../../schemas/requests/chat-completions.schema.json" with { type: "json" };
import type { ChatRequest } from "../../providers/contract.js";
import { parseJsonBody } from "../../http/read-body.js";
import { requestValidator } from "../request-schema.js";
import { checkChatRules } from "./chat-input-rules.js";

const validateChatShape = requestValidator<ChatRequest>(chatSchema, "messages");

/** A chat request's shape, then the rules the schema leaves out (chat-input-rules.ts): the gateway's turn request as it is. */
export function validateChatRequest(body: unknown): ChatRequest {
  const request = validateChatShape(body);
  checkChatRules(request);
  return request;
}

/** Whether the client asked for the usage chunk at the end of its stream. */
export function includesUsage(request: ChatRequest): boolean {
  return request.stream_options?.include_usage === true;
}

/**
 * The request read again from the bytes the client sent, for the turn's
 * rare retry (RequestContext.reread): its own scope, so the turn holds the
 * bytes, not the parsed history (docs/performance.md).
 */
export function rereadOf(bytes: Buffer, prepare: (body: ChatRequest) => unknown): () => ChatRequest {
  return () => {
    const body = validateChatRequest(parseJsonBody(bytes));
    prepare(body);
    return body;
  };
}

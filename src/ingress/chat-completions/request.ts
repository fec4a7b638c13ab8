import chatSchema from "../../../schemas/requests/chat-completions.schema.json" with { type: "json" };
import type { ChatRequest } from "../../providers/contract.js";
import { parseJsonBody } from "../../http/read-body.js";
import { requestValidator } from "../request-schema.js";
import { checkChatRules } from "./chat-input-rules.js";

const validateChatShape = requestValidator<ChatRequest>(chatSchema, "messages");

/**
 * The same schema for a carried request (docs/api.md#carried-chat-completions):
 * a content part of any type is the upstream's to judge — the parts its own
 * answers hold (Mistral's `thinking` chunks) come back in the client's next request.
 */
const contentSchema = chatSchema.$defs.message.properties.content;
const validateCarriedShape = requestValidator<ChatRequest>(
  {
    ...chatSchema,
    $id: "https://carrierd.dev/schemas/requests/chat-completions-carried.schema.json",
    $defs: {
      message: {
        ...chatSchema.$defs.message,
        properties: {
          ...chatSchema.$defs.message.properties,
          content: { ...contentSchema, items: { ...contentSchema.items, properties: { ...contentSchema.items.properties, type: { type: "string" } } } },
        },
      },
    },
  },
  "messages",
);

/**
 * A chat request's shape, then the rules the schema leaves out (chat-input-rules.ts): the gateway's turn request as it is.
 * `carried`: the request goes to an upstream that speaks chat completions itself, which judges its content parts.
 */
export function validateChatRequest(body: unknown, carried = false): ChatRequest {
  const request = carried ? validateCarriedShape(body) : validateChatShape(body);
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
export function rereadOf(bytes: Buffer, prepare: (body: ChatRequest) => unknown, carried = false): () => ChatRequest {
  return () => {
    const body = validateChatRequest(parseJsonBody(bytes), carried);
    prepare(body);
    return body;
  };
}

import type { IncomingMessage, ServerResponse } from "node:http";
import { sessionName, sessionScopeOf, storedSessionId } from "../../turn/sessions/session-scope.js";
import type { AssistantTurn } from "../../routing/carriers/turn-accumulator.js";
import type { ChatService, TurnRun } from "../../turn/chat-service.js";
import type { GatewayOptions } from "../../foundation/config/options.js";
import { GatewayError, toOpenAIError } from "../../foundation/errors/gateway-error.js";
import type { ChatRequest, StreamPart } from "../../providers/contract.js";
import type { RouteSource } from "../../routing/routes/route-source.js";
import type { ResolvedModel } from "../../routing/routes/route-table.js";
import { requireModel, type Caller } from "../../http/keys/caller.js";
import { requireProviderKey } from "../provider-keys.js";
import { noteError, noteRequestedModel } from "../../operations/logging/access-log.js";
import { parseJsonBody, readBodyBytes } from "../../http/read-body.js";
import { chatFailureFrame } from "../first-byte-wait.js";
import { asUpstreamFailure, startTurn } from "../start-turn.js";
import { sendJson } from "../../http/respond.js";
import { dataFrame, SseWriter } from "../sse.js";
import { validateChatRequest } from "./validate-request.js";
import { sortChatTools, type HostedToolGate } from "../hosted-tools.js";

/** What the chat completions endpoint works with. */
export interface ChatEndpoint {
  readonly chat: ChatService;
  readonly options: GatewayOptions;
  readonly routes: RouteSource;
  readonly gate: HostedToolGate;
}

/** POST /v1/chat/completions, streaming and not (docs/api.md#post-v1chatcompletions). */
export async function handleChatCompletions(request: IncomingMessage, response: ServerResponse, endpoint: ChatEndpoint, caller: Caller): Promise<void> {
  const { options } = endpoint;
  const { run, stream, includeUsage } = await startFromBody(request, response, endpoint, caller);
  const id = `chatcmpl-${run.turnId.slice(5)}`;
  const created = Math.floor(Date.now() / 1000);
  if (stream) {
    await streamChunks(run, response, options, { id, created, includeUsage });
  } else {
    await respondWhole(run, response, id, created);
  }
}

/**
 * Reads the request and starts its turn. The parsed body (the whole
 * history) lives only in `startParsed`'s frame: the turn gets a way to parse
 * the kept bytes again for its rare retry, so nothing holds the history
 * while the upstream answers — an async function keeps every local it
 * suspended with, and under load a history held that long is copied by
 * each young-generation GC.
 */
async function startFromBody(
  request: IncomingMessage,
  response: ServerResponse,
  endpoint: ChatEndpoint,
  caller: Caller,
): Promise<{ run: TurnRun; stream: boolean; includeUsage: boolean }> {
  const { chat, options, routes, gate } = endpoint;
  const bytes = await readBodyBytes(request, options.bodyLimit);
  const checkModel = (model: string) => {
    requireModel(caller, model);
    requireProviderKey(routes.current, model, options.env, chat.plugins.registry);
  };
  // the route of the table in force at the first sort, kept: a retry re-reads the body and sorts its tools the same way, quietly
  let resolved: ResolvedModel | undefined;
  const route = (model: string) => (resolved ??= routes.current.resolveModel(model));
  const sortTools = (body: ChatRequest) => sortChatTools(body, route, gate);
  const announce = (body: ChatRequest, omitted: string[]) => {
    const sortedFor = omitted.length > 0 ? route(body.model) : undefined;
    if (sortedFor) gate.announce(response, sortedFor, omitted);
  };
  const { started, stream, includeUsage } = startParsed(bytes, request, response, chat, options, caller, checkModel, { sortTools, announce });
  return { run: await started, stream, includeUsage };
}

interface ToolSorter {
  readonly sortTools: (body: ChatRequest) => string[];
  readonly announce: (body: ChatRequest, omitted: string[]) => void;
}

function startParsed(
  bytes: Buffer,
  request: IncomingMessage,
  response: ServerResponse,
  chat: ChatService,
  options: GatewayOptions,
  caller: Caller,
  checkKey: (model: string) => void,
  tools: ToolSorter,
): { started: Promise<TurnRun>; stream: boolean; includeUsage: boolean } {
  const parsed = parseJsonBody(bytes);
  noteRequestedModel(response, parsed);
  const body = validateChatRequest(parsed);
  checkKey(body.model);
  tools.announce(body, tools.sortTools(body));
  const stream = body.stream === true;
  // the header was checked by the server; the session it names is the caller's of that name (session-scope.ts)
  const sessionHeader = typeof request.headers["x-session-id"] === "string" ? request.headers["x-session-id"] : undefined;
  const sessionScope = sessionScopeOf(caller);
  const explicitSession = sessionHeader === undefined ? undefined : storedSessionId(sessionHeader, sessionScope);
  const includeUsage = (body.stream_options as { include_usage?: boolean } | null | undefined)?.include_usage === true;
  return {
    started: startTurn(chat, body, response, {
      keyHash: caller.keyHash,
      explicitSession,
      sessionScope,
      stream,
      reread: rereadOf(bytes, tools.sortTools),
      client: { options, failureFrame: chatFailureFrame },
    }),
    stream,
    includeUsage,
  };
}

/** Its own scope: the closure keeps the bytes, not the parsed body. */
function rereadOf(bytes: Buffer, sortTools: (body: ChatRequest) => string[]): () => ChatRequest {
  return () => {
    const body = validateChatRequest(parseJsonBody(bytes));
    sortTools(body);
    return body;
  };
}

async function respondWhole(run: TurnRun, response: ServerResponse, id: string, created: number): Promise<void> {
  try {
    for await (const _batch of run.batches) {
      // the accumulator inside the run folds every part
    }
  } catch (error) {
    run.fail(error);
    throw asUpstreamFailure(error);
  }
  const turn = await run.complete();
  sendJson(response, 200, completionBody(turn, run.model, id, created), { "x-session-id": sessionName(run.sessionId) });
}

function completionBody(turn: AssistantTurn, model: string, id: string, created: number): object {
  const message: Record<string, unknown> = { role: "assistant", content: turn.content.length > 0 || turn.toolCalls.length === 0 ? turn.content : null };
  if (turn.reasoningText) message.reasoning_content = turn.reasoningText;
  if (turn.toolCalls.length > 0) message.tool_calls = turn.toolCalls;
  return {
    id,
    object: "chat.completion",
    created,
    model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: turn.finishReason }],
    usage: turn.usage ?? null,
  };
}

interface StreamShape {
  id: string;
  created: number;
  includeUsage: boolean;
}

/**
 * Relays parts as `chat.completion.chunk`s. The constant head of every chunk
 * is serialised once. A reasoning or text delta (nearly every part) is
 * written between bytes encoded once per stream, so its only new string is
 * its text's JSON: building each chunk's whole text made garbage of every
 * chunk, and young-generation GC grows with it under load.
 */
async function streamChunks(run: TurnRun, response: ServerResponse, options: GatewayOptions, shape: StreamShape): Promise<void> {
  const sse = new SseWriter(response, { "x-session-id": sessionName(run.sessionId) }, options.keepaliveSeconds);
  const head = `{"id":${JSON.stringify(shape.id)},"object":"chat.completion.chunk","created":${shape.created},"model":${JSON.stringify(run.model)}`;
  const chunk = (delta: string, finish: string | null = null) =>
    `${head},"choices":[{"index":0,"delta":${delta},"logprobs":null,"finish_reason":${finish === null ? "null" : JSON.stringify(finish)}}]}`;
  const deltaFrame = (field: string) => dataFrame(`${head},"choices":[{"index":0,"delta":{"${field}":`, `},"logprobs":null,"finish_reason":null}]}`);
  const reasoningDelta = deltaFrame("reasoning_content");
  const textDelta = deltaFrame("content");
  sse.data(chunk(`{"role":"assistant","content":""}`));
  const toolIndexes = new Map<number, number>();
  try {
    for await (const batch of run.batches) {
      for (const part of batch) {
        if (part.type === "reasoning-delta") sse.dataInFrame(reasoningDelta, JSON.stringify(part.text));
        else if (part.type === "text-delta") sse.dataInFrame(textDelta, JSON.stringify(part.text));
        else if (part.type === "tool-call-delta") sse.data(chunk(toolCallDelta(part, toolIndexes)));
      }
    }
  } catch (error) {
    run.fail(error);
    const failure = asUpstreamFailure(error);
    noteError(response, failure);
    sse.data(JSON.stringify(toOpenAIError(failure)));
    sse.end("data: [DONE]\n\n");
    return;
  }
  sse.holdUntilEnd(); // the last events leave with [DONE]
  let turn: Awaited<ReturnType<TurnRun["complete"]>>;
  try {
    turn = await run.complete(); // durable before the client sees [DONE]
  } catch (error) {
    if (!(error instanceof GatewayError)) throw error;
    // the turn could not be stored (store_unavailable): the client is told so, never that the turn completed
    noteError(response, error);
    sse.data(JSON.stringify(toOpenAIError(error)));
    sse.end("data: [DONE]\n\n");
    return;
  }
  sse.data(chunk("{}", turn.finishReason));
  if (shape.includeUsage && turn.usage) sse.data(`${head},"choices":[],"usage":${JSON.stringify(turn.usage)}}`);
  sse.end("data: [DONE]\n\n");
}

function toolCallDelta(part: Extract<StreamPart, { type: "tool-call-delta" }>, toolIndexes: Map<number, number>): string {
  // clients index tool calls from 0 in the order they appear, whatever the upstream numbered them
  let index = toolIndexes.get(part.index);
  const first = index === undefined;
  if (index === undefined) toolIndexes.set(part.index, (index = toolIndexes.size));
  const fn: Record<string, string> = {};
  if (first) fn.name = part.name ?? "";
  if (part.arguments !== undefined || first) fn.arguments = part.arguments ?? "";
  const call: Record<string, unknown> = { index };
  if (first) Object.assign(call, { id: part.id ?? "", type: "function" });
  call.function = fn;
  return `{"tool_calls":[${JSON.stringify(call)}]}`;
}

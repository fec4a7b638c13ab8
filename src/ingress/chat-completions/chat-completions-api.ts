import { clientSessionName } from "../client-session.js";
import type { IncomingMessage, ServerResponse } from "node:http";
import { inject, injectable } from "tsyringe";
import { sessionName, sessionScopeOf, storedSessionId } from "../../conversation/session-scope.js";
import type { ChatService, TurnRun } from "../../turn/chat-service.js";
import type { GatewayOptions } from "../../foundation/config/options.js";
import { CHAT_SERVICE, HOSTED_TOOL_GATE, LOGGER, OPTIONS, ROUTE_SOURCE } from "../../foundation/container/tokens.js";
import type { ChatRequest } from "../../providers/contract.js";
import type { RouteSource } from "../../routing/routes/route-source.js";
import { requireModel, type Caller } from "../../http/keys/caller.js";
import { parseJsonBody, readBodyBytes } from "../../http/read-body.js";
import { sendJson } from "../../http/respond.js";
import { noteRequestedModel } from "../../foundation/logging/access-log.js";
import type { Logger } from "../../foundation/logging/logger.js";
import { requireProviderKeyOf } from "../provider-keys.js";
import { sortChatTools, type HostedToolGate } from "../hosted-tools.js";
import { readTurn, streamTurn } from "../relay-turn.js";
import { startTurn } from "../start-turn.js";
import { noteListedMessages, requestStringsOf } from "../request-strings.js";
import { DroppedFields } from "../dropped-fields.js";
import { droppedOnTarget } from "../target-fields.js";
import { isRecord } from "../../foundation/util/json-readers.js";
import { carriedChatFailureFrame, chatFailureFrame } from "./errors.js";
import { CarriedStream, carriedRequest, sendCarriedRefusal, sendCarriedWhole } from "../carried/carried-answer.js";
import { completionObject, type CompletionIdentity } from "./final-object.js";
import { includesUsage, rereadOf, validateChatRequest } from "./request.js";
import { ChunkStream } from "./stream.js";

/** A chat completion whose turn is starting, and how it is to be answered. */
interface Starting {
  readonly started: Promise<TurnRun>;
  readonly stream: boolean;
  readonly includeUsage: boolean;
  /** The route's upstream speaks chat completions: the request is carried, the answer is the upstream's (docs/architecture.md#two-paths). */
  readonly carried: boolean;
}

/** POST /v1/chat/completions, streaming and not (docs/api.md#post-v1chatcompletions). */
@injectable()
export class ChatCompletionsApi {
  constructor(
    @inject(CHAT_SERVICE) private readonly chat: ChatService,
    @inject(OPTIONS) private readonly options: GatewayOptions,
    @inject(ROUTE_SOURCE) private readonly routes: RouteSource,
    @inject(HOSTED_TOOL_GATE) private readonly gate: HostedToolGate,
    @inject(LOGGER) private readonly log: Logger,
  ) {
    this.dropped = new DroppedFields(log);
  }

  /** The fields a route's target had no equivalent for, said once per route and field. */
  private readonly dropped: DroppedFields;

  async create(request: IncomingMessage, response: ServerResponse, caller: Caller): Promise<void> {
    const bytes = await readBodyBytes(request, this.options.bodyLimit);
    const { started, stream, includeUsage, carried } = this.start(bytes, request, response, caller);
    if (carried) return this.answerCarried(started, response, stream);
    const run = await started;
    const identity: CompletionIdentity = { id: `chatcmpl-${run.turnId.slice(5)}`, created: Math.floor(Date.now() / 1000), model: run.model };
    const headers = { "x-session-id": sessionName(run.sessionId) };
    if (stream) {
      const chunks = new ChunkStream(response, headers, this.options.keepaliveSeconds, identity, includeUsage);
      await streamTurn(run, response, chunks, this.log);
      return;
    }
    await readTurn(run, () => {}); // the run's accumulator folds every part
    sendJson(response, 200, completionObject(await run.complete(), identity), headers);
  }

  /**
   * Parses and checks the request and starts its turn. Not async: the
   * parsed body (the whole history) lives only in this frame, and the turn
   * gets a way to read the kept bytes again for its rare retry, so nothing
   * holds the history while the upstream answers (docs/performance.md).
   */
  private start(bytes: Buffer, request: IncomingMessage, response: ServerResponse, caller: Caller): Starting {
    const parsed = parseJsonBody(bytes);
    noteRequestedModel(response, parsed);
    // the route is looked up once, on the table in force: whether the request is carried, its checks, its tools and its turn all read it
    const table = this.routes.current;
    const resolved = isRecord(parsed) && typeof parsed.model === "string" ? table.resolveModel(parsed.model) : undefined;
    // the route's upstream speaks chat completions itself (the `openai-compatible` plugin): the request is carried as the
    // client sent it, changed only where carrierd must (docs/api.md#carried-chat-completions), and the answer is the upstream's
    const wire = resolved ? this.chat.plugins.registry.get(resolved.provider.plugin)?.definition.wire : undefined;
    const carried = wire === "openai-chat";
    const body = validateChatRequest(parsed, carried);
    requireModel(caller, body.model);
    // the messages' long strings go upstream as the client's own bytes, held until this response ends (docs/performance.md#request-string-bytes);
    // a carried body is the client's bytes already
    const strings = carried ? undefined : requestStringsOf(bytes, "messages");
    if (strings) {
      noteListedMessages(strings, body.messages);
      response.once("close", () => strings.body.release());
    }
    if (resolved) requireProviderKeyOf(resolved, body.model, this.options.env, this.chat.plugins.registry);
    // the validated body names the model looked up above, and a retry reads the same bytes: its tools sort the same way, quietly
    const route = () => resolved;
    const sortTools = (chatRequest: ChatRequest) => sortChatTools(chatRequest, route, this.gate);
    const omitted = sortTools(body);
    if (resolved && omitted.length > 0) this.gate.announce(response, resolved, omitted);
    // on a route whose upstream speaks another wire, the fields its request has no place for (docs/api.md#across-wires)
    if (resolved) this.dropped.note("chat_completions", body.model, droppedOnTarget(body, wire));
    const stream = body.stream === true;
    // X-Session-Id (checked by the server) or the agent's own session id; the session it names is the caller's of that name (session-scope.ts)
    const sessionHeader = clientSessionName(request);
    const sessionScope = sessionScopeOf(caller);
    const started = startTurn(this.chat, body, response, {
      keyHash: caller.keyHash,
      explicitSession: sessionHeader === undefined ? undefined : storedSessionId(sessionHeader, sessionScope),
      sessionScope,
      stream,
      reread: rereadOf(bytes, sortTools, carried),
      ...(carried ? { carried: carriedRequest(request, bytes, "openai-") } : {}),
      // the turn keeps this table and route rather than looking the model up again
      ...(resolved ? { route: { table, resolved } } : {}),
      client: { options: this.options, failureFrame: carried ? carriedChatFailureFrame : chatFailureFrame },
    });
    return { started, stream, includeUsage: includesUsage(body), carried };
  }

  /** A carried request's answer: the upstream's status, headers and bytes, a stream frame by frame; its refusal as it was sent. */
  private async answerCarried(started: Promise<TurnRun>, response: ServerResponse, stream: boolean): Promise<void> {
    let run: TurnRun;
    try {
      run = await started;
    } catch (error) {
      if (sendCarriedRefusal(response, error, carriedChatFailureFrame)) return;
      throw error;
    }
    const headers = { "x-session-id": sessionName(run.sessionId) };
    if (stream) await streamTurn(run, response, new CarriedStream(response, run, headers, carriedChatFailureFrame), this.log);
    else await sendCarriedWhole(run, response, headers);
  }
}

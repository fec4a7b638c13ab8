import { clientSessionName } from "../client-session.js";
import type { IncomingMessage, ServerResponse } from "node:http";
import { inject, injectable } from "tsyringe";
import { startTurn } from "../start-turn.js";
import { readTurn, streamTurn } from "../relay-turn.js";
import { responsesFailureFrame } from "./errors.js";
import { parseJsonBody, readBodyBytes, readJsonBody } from "../../http/read-body.js";
import { requestStringsOf, type RequestStrings } from "../request-strings.js";
import { sendJson } from "../../http/respond.js";
import type { AssistantTurn } from "../../routing/carriers/turn-accumulator.js";
import type { ChatService, TurnRun } from "../../turn/chat-service.js";
import { checkSessionId, newId } from "../../turn/sessions/session-id.js";
import type { GatewayOptions } from "../../foundation/config/options.js";
import type { Compactor } from "../../turn/compaction/compactor.js";
import { CHAT_SERVICE, COMPACTOR, ENVELOPES, HOSTED_TOOL_GATE, LOGGER, OPTIONS, ROUTE_SOURCE, STORAGE } from "../../foundation/container/tokens.js";
import type { HostedToolGate } from "../hosted-tools.js";
import type { Envelopes, SealedCarriers } from "../../routing/carriers/envelope.js";
import { requireProviderKey } from "../provider-keys.js";
import { noteRequestedModel } from "../../foundation/logging/access-log.js";
import type { RouteSource } from "../../routing/routes/route-source.js";
import { GatewayError } from "../../foundation/errors/gateway-error.js";
import type { Logger } from "../../foundation/logging/logger.js";
import type { ChatMessage, JsonObject } from "../../providers/contract.js";
import { convertInput } from "./convert-input.js";
import { inputItemsOf, pageOf, referencedIds } from "./input-items.js";
import { assistantMessage } from "./history-message.js";
import { windowItems } from "./window-items.js";
import { carriersOf, NOTHING_SEALED, openEnvelopes, sealedByIndex, sealReasoningItems, wantsEncryptedContent } from "./sealed-reasoning.js";
import { ResponseStream, type ResponseFinisher } from "./stream.js";
import { OutputBuilder } from "./output-builder.js";
import { toChatRequest, validateCompactRequest, validateResponsesRequest, type ResponsesRequest } from "./request.js";
import { upstreamTools } from "./request-tools.js";
import { incompleteReasonOf, type ResponseIdentity, type ResponseOutcome } from "./final-object.js";
import { ResponseBody } from "./response-body.js";
import { RecentEchoes } from "./recent-echoes.js";
import type { StoredResponse } from "../../storage/responses.js";
import type { ResponseStorage, Storage } from "../../storage/storage.js";
import { owns, requireModel, type Caller } from "../../http/keys/caller.js";
import { isRecord } from "../../foundation/util/json-readers.js";
import { shown } from "../../foundation/util/shown.js";
import { carriedErrorFrame, carriedRequest, sendCarriedRefusal, sendCarriedWhole } from "../carried/carried-answer.js";
import { CarriedResponseStream, carriedView, finalResponse, outputItems, type ResponseKeeper } from "./carried-responses.js";
import { NamespacedNames } from "./namespaced-names.js";
import { sessionName, sessionScopeOf, storedSessionId } from "../../conversation/session-scope.js";

/** What one POST continues from and must store afterwards. */
interface Continuation {
  /** The response this one continues, whose history comes first. */
  readonly parentId: string | null;
  readonly history: ChatMessage[];
  readonly input: ChatMessage[];
  /** The request's input as input_items lists it; only a retrievable response keeps them (undefined for `store: false`). */
  readonly inputItems: JsonObject[] | undefined;
  /** The stored id of the session it names (the caller's X-Session-Id under its scope, or a stored response's session). */
  readonly sessionHeader: string | undefined;
  /** The stored id of the named conversation (under the caller's scope, as a session's). */
  readonly conversationId: string | null;
  /** The data scope of the request's key, which the new response is filed under. */
  readonly keyHash: string;
  /** How the upstream names the request's namespaced functions. */
  readonly names: NamespacedNames;
  /** Carriers from the envelopes the input's reasoning items carried, by the message they belong to. */
  readonly sealed: ReadonlyMap<ChatMessage, SealedCarriers>;
}

/** POST/GET/DELETE /v1/responses (docs/api.md#post-v1responses), on top of the chat path every plugin serves. */
@injectable()
export class ResponsesApi {
  private readonly store: ResponseStorage;
  /** The echoed members' text of the requests lately (an agent's tools), for every Response of this process. */
  private readonly echoes = new RecentEchoes();

  constructor(
    @inject(CHAT_SERVICE) private readonly chat: ChatService,
    @inject(STORAGE) storage: Storage,
    @inject(OPTIONS) private readonly options: GatewayOptions,
    @inject(LOGGER) private readonly log: Logger,
    @inject(COMPACTOR) private readonly compactor: Compactor,
    @inject(ROUTE_SOURCE) private readonly routes: RouteSource,
    @inject(HOSTED_TOOL_GATE) private readonly gate: HostedToolGate,
    @inject(ENVELOPES) private readonly envelopes: Envelopes,
  ) {
    this.store = storage.responses;
  }

  async create(request: IncomingMessage, response: ServerResponse, caller: Caller): Promise<void> {
    const bytes = await readBodyBytes(request, this.options.bodyLimit);
    const parsed = parseJsonBody(bytes);
    noteRequestedModel(response, parsed);
    if (this.carries(parsed)) return this.carry(request, response, caller, bytes, parsed);
    const body = validateResponsesRequest(parsed);
    if (body.background === true) throw new GatewayError("invalid_request", "background responses are not supported by carrierd", "background");
    requireModel(caller, body.model);
    requireProviderKey(this.routes.current, body.model, this.options.env, this.chat.plugins.registry);
    const stream = body.stream === true;
    const table = this.routes.current;
    const tools = upstreamTools(body.tools, body.tool_choice, () => table.resolveModel(body.model), this.gate);
    const sessionHeader = clientSessionName(request);
    // the input's long strings go upstream as the client's own bytes, held until this response ends (docs/performance.md#request-string-bytes)
    const strings = requestStringsOf(bytes, "input");
    if (strings) response.once("close", () => strings.body.release());
    const continuation = await this.continuation(body, sessionHeader, caller, tools.names, strings);
    if (tools.route) this.gate.announce(response, tools.route, tools.omitted);
    // a continued chain goes upstream under its checkpoint, compacted first when it outgrew the model (docs/compaction.md)
    const chatRequest = await this.compactor.prepare({
      keyHash: caller.keyHash,
      sessionId: continuation.sessionHeader,
      parentId: continuation.parentId,
      history: continuation.history,
      build: (history) => toChatRequest(body, history, continuation.input, stream, tools, strings),
    });
    const run = await startTurn(this.chat, chatRequest, response, {
      keyHash: caller.keyHash,
      explicitSession: continuation.sessionHeader,
      sessionScope: sessionScopeOf(caller),
      stream,
      client: { options: this.options, failureFrame: responsesFailureFrame },
      sealed: sealedByIndex(chatRequest.messages, continuation.sealed),
    });
    const identity: ResponseIdentity = {
      id: newId("resp_"),
      createdAt: Math.floor(Date.now() / 1000),
      model: run.model,
      request: body,
      // the name the client gave; the store files it under the key (continuation.conversationId)
      conversationId: continuation.conversationId === null ? null : sessionName(continuation.conversationId),
      toolsOmitted: tools.omitted,
    };
    const responseBody = new ResponseBody(identity, this.echoes);
    if (stream) await this.streamResponse(run, response, responseBody, continuation);
    else await this.respondWhole(run, response, responseBody, continuation);
  }

  /**
   * Whether the request goes to a route whose upstream speaks the Responses
   * API itself: then it is carried as the client sent it, every field with
   * it (docs/api.md#carried-requests), and the provider judges it. What
   * carrierd keeps itself stays translated: a request continuing a stored
   * response (`previous_response_id`) or a named `conversation` (the upstream
   * knows neither), and `background` (refused: carrierd runs none).
   */
  private carries(parsed: unknown): parsed is JsonObject & { model: string } {
    if (!isRecord(parsed) || typeof parsed.model !== "string") return false;
    if (!(typeof parsed.input === "string" || Array.isArray(parsed.input))) return false;
    if (isSet(parsed.previous_response_id) || isSet(parsed.conversation) || parsed.background === true) return false;
    const resolved = this.routes.current.resolveModel(parsed.model);
    return resolved !== undefined && this.chat.plugins.registry.get(resolved.provider.plugin)?.definition.wire === "openai-responses";
  }

  /**
   * A request carried to a Responses route: the turn reads its view, the
   * upstream gets its bytes, the client the upstream's answer. A Response the
   * request lets be kept (`store` not false) is stored under the upstream's
   * id, so `previous_response_id` with that id continues it.
   */
  private async carry(request: IncomingMessage, response: ServerResponse, caller: Caller, bytes: Buffer, body: JsonObject & { model: string }): Promise<void> {
    requireModel(caller, body.model);
    requireProviderKey(this.routes.current, body.model, this.options.env, this.chat.plugins.registry);
    const stream = body.stream === true;
    const view = carriedView(body, body.model, stream);
    const sessionHeader = sessionOf(clientSessionName(request));
    const sealed = view.envelopes.size > 0 ? await openEnvelopes(this.envelopes, view.envelopes, caller.keyHash, this.log) : NOTHING_SEALED;
    const failureFrame = carriedErrorFrame(responsesFailureFrame);
    let run: TurnRun;
    try {
      run = await startTurn(this.chat, view.request, response, {
        keyHash: caller.keyHash,
        explicitSession: sessionHeader === undefined ? undefined : storedSessionId(sessionHeader, sessionScopeOf(caller)),
        sessionScope: sessionScopeOf(caller),
        stream,
        sealed: sealedByIndex(view.request.messages, sealed),
        carried: { ...carriedRequest(request, bytes, "openai-"), assistantItems: view.assistantItems },
        client: { options: this.options, failureFrame },
      });
    } catch (error) {
      if (sendCarriedRefusal(response, error, failureFrame)) return;
      throw error;
    }
    const headers = { "x-session-id": sessionName(run.sessionId) };
    const keeper: ResponseKeeper | undefined =
      body.store === false
        ? undefined
        : (upstream, turn) =>
            this.store.save(
              {
                id: shown(upstream.id),
                parentId: null,
                sessionId: run.sessionId,
                keyHash: caller.keyHash,
                model: run.model,
                createdAt: typeof upstream.created_at === "number" ? upstream.created_at : Math.floor(Date.now() / 1000),
                conversationId: null,
                messages: [...view.input, assistantMessage(turn, outputItems(upstream), NamespacedNames.NONE)],
                body: upstream,
                inputItems: inputItemsOf(typeof body.input === "string" || Array.isArray(body.input) ? body.input : [], () => undefined),
              },
              outputItems(upstream),
            );
    if (stream) await streamTurn(run, response, new CarriedResponseStream(response, run, headers, failureFrame, keeper), this.log);
    else
      await sendCarriedWhole(run, response, headers, async (answer, turn) => {
        const upstream = keeper && run.head?.status === 200 ? finalResponse(answer, false) : undefined;
        if (upstream) await keeper!(upstream, turn);
      });
  }

  /**
   * POST /v1/responses/compact, backed by carrierd's own compaction
   * (docs/compaction.md): the chain ending at `previous_response_id` is compacted now — its
   * middle summarised into a checkpoint, every carrier of the kept turns
   * kept — and the window as it will go upstream is returned. A request that
   * continues the chain with `previous_response_id` goes under it.
   */
  async compact(request: IncomingMessage, response: ServerResponse, caller: Caller): Promise<void> {
    const parsed = await readJsonBody(request, this.options.bodyLimit);
    noteRequestedModel(response, parsed);
    const body = validateCompactRequest(parsed);
    requireModel(caller, body.model);
    if (!this.routes.current.resolveModel(body.model))
      throw new GatewayError("model_not_found", `The model '${body.model}' does not exist in routes.yaml`, "model");
    requireProviderKey(this.routes.current, body.model, this.options.env, this.chat.plugins.registry);
    const previous = await this.owned(body.previous_response_id, caller, "history");
    if (!previous) throw new GatewayError("not_found", `Previous response with id '${body.previous_response_id}' not found.`, "previous_response_id");
    const compacted = await this.compactor.prepare({
      keyHash: caller.keyHash,
      sessionId: previous.sessionId,
      parentId: previous.id,
      history: previous.history ?? [],
      force: true,
      build: (history) => toChatRequest({ model: body.model, input: [], instructions: body.instructions ?? null }, history, [], false),
    });
    const usage = {
      input_tokens: 0,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 0,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 0,
    };
    sendJson(
      response,
      200,
      { id: newId("cmp_"), object: "response.compaction", created_at: Math.floor(Date.now() / 1000), output: windowItems(compacted.messages), usage },
      { "x-session-id": sessionName(previous.sessionId) },
    );
  }

  async get(id: string, response: ServerResponse, caller: Caller): Promise<void> {
    const stored = await this.owned(id, caller);
    if (!stored) throw responseNotFound(id);
    sendJson(response, 200, stored.body, { "x-session-id": sessionName(stored.sessionId) });
  }

  /** GET /v1/responses/{id}/input_items: the items this response was asked with, paged as OpenAI pages them. */
  async inputItems(id: string, query: URLSearchParams, response: ServerResponse, caller: Caller): Promise<void> {
    const stored = await this.owned(id, caller, "inputItems");
    if (!stored) throw responseNotFound(id);
    sendJson(response, 200, pageOf(stored.inputItems ?? [], query), { "x-session-id": sessionName(stored.sessionId) });
  }

  /**
   * POST /v1/responses/{id}/cancel. Only a background response can be
   * cancelled (as in OpenAI's API), and carrierd runs none: a stored
   * response is finished, so the answer is the spec's 400. A client stops
   * a response in flight by closing its request; the upstream call is
   * aborted at once.
   */
  async cancel(id: string, caller: Caller): Promise<never> {
    if (!(await this.owned(id, caller))) throw responseNotFound(id);
    throw new GatewayError(
      "invalid_request",
      "Only responses created with background set to true can be cancelled, and carrierd runs no background responses; this one has finished. To stop a response in flight, close its request: carrierd aborts the upstream call.",
      "response_id",
    );
  }

  async delete(id: string, response: ServerResponse, caller: Caller): Promise<void> {
    const stored = await this.owned(id, caller);
    if (!stored || !(await this.store.delete(id))) throw responseNotFound(id);
    sendJson(response, 200, { id, object: "response", deleted: true }, { "x-session-id": sessionName(stored.sessionId) });
  }

  /**
   * The history this request continues and the session it belongs to:
   * `previous_response_id` or `conversation` first, then the client's
   * X-Session-Id, then the session of the stored items its input references.
   */
  /** A stored response, when it is the caller's: another key's is answered as absent (404, so ids do not leak). */
  private async owned(id: string, caller: Caller, also?: "inputItems" | "history"): Promise<StoredResponse | undefined> {
    const stored = await this.store.get(id, also);
    return stored && owns(caller, stored.keyHash) ? stored : undefined;
  }

  private async continuation(
    body: ResponsesRequest,
    header: string | undefined,
    caller: Caller,
    names: NamespacedNames,
    strings?: RequestStrings,
  ): Promise<Continuation> {
    // checked wherever it appears, even when previous_response_id or conversation decides the session (docs/api.md#sessions-x-session-id);
    // a name means the caller's session or conversation of that name, never another key's (session-scope.ts)
    const scope = sessionScopeOf(caller);
    const named = sessionOf(header);
    const explicit = named === undefined ? undefined : storedSessionId(named, scope);
    if (body.previous_response_id && body.conversation) {
      throw new GatewayError("invalid_request", "Mutually exclusive parameters: provide only one of 'previous_response_id' or 'conversation'.", "conversation");
    }
    let referencedSession: string | undefined;
    const referenced = new Map<string, JsonObject>();
    // the items the input references, read first: the conversion that checks and resolves them is synchronous
    for (const id of referencedIds(body.input)) {
      const found = await this.store.item(id);
      if (!found || !owns(caller, found.keyHash)) continue;
      referencedSession = found.sessionId;
      referenced.set(id, found.item);
    }
    const envelopes = new Map<ChatMessage, string>();
    const input = convertInput(body.input, (id) => referenced.get(id), names, envelopes, strings);
    // listed only where they are kept: the store files them with a retrievable response's body, and Codex sends store: false
    // (docs/performance.md#input-items-only-when-kept)
    const inputItems = body.store !== false ? inputItemsOf(body.input, (id) => referenced.get(id)) : undefined;
    const sealed = envelopes.size > 0 ? await openEnvelopes(this.envelopes, envelopes, caller.keyHash, this.log) : NOTHING_SEALED;
    // what every continuation carries; where it continues from is what differs
    const request = { input, inputItems, keyHash: caller.keyHash, names, sealed };
    if (body.previous_response_id) {
      const previous = await this.owned(body.previous_response_id, caller, "history");
      if (!previous) throw new GatewayError("not_found", `Previous response with id '${body.previous_response_id}' not found.`, "previous_response_id");
      return { ...request, parentId: previous.id, history: previous.history ?? [], sessionHeader: previous.sessionId, conversationId: null };
    }
    if (body.conversation) {
      const id = typeof body.conversation === "string" ? body.conversation : body.conversation.id;
      if (!/^[A-Za-z0-9._:-]{1,128}$/.test(id)) throw new GatewayError("invalid_request", "conversation ids must match [A-Za-z0-9._:-]{1,128}", "conversation");
      const stored = storedSessionId(id, scope);
      const conversation = await this.store.conversation(stored, "history");
      // the owner key's bare names: a conversation from before access keys (null) or its own
      if (conversation && !owns(caller, conversation.keyHash)) throw new GatewayError("not_found", `Conversation with id '${id}' not found.`, "conversation");
      const parentId = conversation?.lastResponseId ?? null;
      return {
        ...request,
        parentId,
        history: conversation?.history ?? [],
        sessionHeader: conversation?.sessionId ?? explicit ?? referencedSession,
        conversationId: stored,
      };
    }
    return { ...request, parentId: null, history: [], sessionHeader: explicit ?? referencedSession, conversationId: null };
  }

  private async respondWhole(run: TurnRun, response: ServerResponse, body: ResponseBody, continuation: Continuation): Promise<void> {
    const builder = new OutputBuilder(undefined, continuation.names);
    await readTurn(run, (part) => builder.add(part));
    const items = builder.finish();
    const turn = await run.complete();
    const finisher = this.finisher(run, body, continuation);
    const envelope = await finisher.seal(items);
    if (envelope) sealReasoningItems(items, envelope);
    sendJsonText(response, body.json(await finisher.store(turn, items)), { "x-session-id": sessionName(run.sessionId) });
  }

  /** Streams the events docs/api.md#streaming lists; the response is stored before `response.completed` goes out. */
  private async streamResponse(run: TurnRun, response: ServerResponse, body: ResponseBody, continuation: Continuation): Promise<void> {
    const headers = { "x-session-id": sessionName(run.sessionId) };
    const finisher = this.finisher(run, body, continuation);
    const events = new ResponseStream(response, headers, this.options.keepaliveSeconds, body, continuation.names, finisher);
    await streamTurn(run, response, events, this.log);
  }

  /** What a finished turn's items become: sealed when asked for, then the Response stored (`finish`). */
  private finisher(run: TurnRun, body: ResponseBody, continuation: Continuation): ResponseFinisher {
    return {
      seal: (items) => this.seal(run, items, body.identity.request, continuation.keyHash),
      sealSoFar: (reasoningText) => this.sealSoFar(run, body.identity.request.model, reasoningText, continuation.keyHash),
      lateSeal: (items) =>
        run.stored && (run.stored.reasoningDetails?.length || run.stored.nativeRecord)
          ? this.seal(run, items, body.identity.request, continuation.keyHash)
          : Promise.resolve(undefined),
      store: (turn, items) => this.finish(turn, items, run, body, continuation),
    };
  }

  /** The envelope of the turn's carriers, when the request asked for encrypted_content and the output has a reasoning item to carry it. */
  private async seal(run: TurnRun, items: readonly JsonObject[], request: ResponsesRequest, keyHash: string): Promise<string | undefined> {
    if (!run.stored || !wantsEncryptedContent(request) || !items.some((item) => item.type === "reasoning")) return undefined;
    return this.envelopes.seal(carriersOf(run.stored), keyHash);
  }

  /** The envelope of the turn's reasoning so far (its carriers as they have arrived); undefined, said in the log, when it cannot be sealed. */
  private async sealSoFar(run: TurnRun, model: string, reasoningText: string, keyHash: string): Promise<string | undefined> {
    const resolved = this.routes.current.resolveModel(model);
    if (!resolved) return undefined;
    const carriers = {
      id: run.turnId,
      sessionId: run.sessionId,
      plugin: resolved.provider.plugin,
      provider: resolved.provider.id,
      upstreamModel: resolved.upstreamModel,
      reasoningText,
      reasoningDetails: undefined,
      nativeRecord: undefined,
    };
    try {
      return await this.envelopes.seal(carriers, keyHash);
    } catch (error) {
      this.log.warn({ err: error, session_id: run.sessionId }, "the turn's reasoning could not be sealed; its item goes out without encrypted_content");
      return undefined;
    }
  }

  /**
   * Builds the final Response and stores it: retrievable unless `store:
   * false`; a named conversation keeps even an unretrievable one as its next
   * link, because naming it asked carrierd to remember the conversation.
   * Returns the outcome it was stored with (the time it completed fixed),
   * which the client is answered with.
   */
  private async finish(turn: AssistantTurn, items: JsonObject[], run: TurnRun, body: ResponseBody, continuation: Continuation): Promise<ResponseOutcome> {
    const incompleteReason = incompleteReasonOf(turn.finishReason);
    const status = incompleteReason ? "incomplete" : "completed";
    const outcome: ResponseOutcome = { status, output: items, usage: turn.usage, incompleteReason, completedAt: Math.floor(Date.now() / 1000) };
    const identity = body.identity;
    const retrievable = identity.request.store !== false;
    if (retrievable || identity.conversationId) {
      const messages = [...continuation.input, assistantMessage(turn, items, continuation.names)];
      const record = {
        id: identity.id,
        parentId: continuation.parentId,
        sessionId: run.sessionId,
        keyHash: continuation.keyHash,
        model: identity.model,
        createdAt: identity.createdAt,
        conversationId: continuation.conversationId,
        messages,
        body: retrievable ? body.object(outcome) : null,
        inputItems: continuation.inputItems,
      };
      await this.store.save(record, items);
    }
    return outcome;
  }
}

/** As sendJson (http/respond.ts) sends a 200, for a body already serialised: ResponseBody.json writes its echo from text it holds. */
function sendJsonText(response: ServerResponse, json: string, headers: Record<string, string>): void {
  const bytes = Buffer.from(json);
  response.writeHead(200, { "content-type": "application/json", "content-length": bytes.length, ...headers });
  response.end(bytes);
}

/** Whether a request member is given (not absent and not null). */
function isSet(value: unknown): boolean {
  return value !== undefined && value !== null;
}

function sessionOf(header: string | undefined): string | undefined {
  return header === undefined ? undefined : checkSessionId(header);
}

function responseNotFound(id: string): GatewayError {
  return new GatewayError("not_found", `Response with id '${id}' not found.`, "response_id");
}

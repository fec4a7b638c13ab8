import { sessionName, sessionScopeOf, storedSessionId } from "../../conversation/session-scope.js";
import type { IncomingMessage, ServerResponse } from "node:http";
import { inject, injectable } from "tsyringe";
import { requireProviderKeyOf } from "../provider-keys.js";
import { clientSessionName, contextCompacted } from "../client-session.js";
import { parseJsonBody, readBodyBytes } from "../../http/read-body.js";
import { sendJson } from "../../http/respond.js";
import { startTurn } from "../start-turn.js";
import { readTurn, streamTurn } from "../relay-turn.js";
import type { ChatService, TurnRun } from "../../turn/chat-service.js";
import type { GatewayOptions } from "../../foundation/config/options.js";
import type { Envelopes } from "../../routing/carriers/envelope.js";
import { CHAT_SERVICE, ENVELOPES, LOGGER, OPTIONS, PLUGIN_HOST, ROUTE_SOURCE, STORAGE } from "../../foundation/container/tokens.js";
import { GatewayError } from "../../foundation/errors/gateway-error.js";
import { requireModel, type Caller } from "../../http/keys/caller.js";
import { noteModel, noteRequestedModel } from "../../foundation/logging/access-log.js";
import type { Logger } from "../../foundation/logging/logger.js";
import type { PluginHost } from "../../providers/plugin-host.js";
import type { ResolvedModel, RouteTable } from "../../routing/routes/route-table.js";
import type { Storage } from "../../storage/storage.js";
import { countsUpstream, estimateInputTokens, upstreamCount } from "./count-tokens.js";
import type { RouteSource } from "../../routing/routes/route-source.js";
import { clientThinking } from "./client-thinking.js";
import { errorEvent } from "./errors.js";
import { MessageBlocks } from "./message-blocks.js";
import { anthropicUsage, messageObject, stopReasonOf, type MessageIdentity } from "./final-object.js";
import { MessageStream, PING, type BlockSigner, type BlockView, type SealedProducer } from "./stream.js";
import { validateCountTokensRequest, validateMessagesRequest } from "./request.js";
import { openThinkingSignatures, thinkingSignature } from "./thinking-signature.js";
import { droppedKeys, toChatRequest } from "./to-chat-request.js";
import { DroppedFields } from "../dropped-fields.js";
import { carriedView } from "./carried-view.js";
import { CarriedStream, carriedErrorFrame, carriedRequest, sendCarriedRefusal, sendCarriedWhole } from "../carried/carried-answer.js";
import type { JsonObject } from "../../providers/contract.js";
import { isRecord } from "../../foundation/util/json-readers.js";

/**
 * POST /v1/messages, streaming and not: the Anthropic Messages API on top of
 * the chat path every route serves. The request becomes the gateway's turn
 * request (toChatRequest), the turn runs as any other (the same session
 * storage, replay, events, metrics), and its parts are rendered as
 * Anthropic content blocks (MessageBlocks).
 */
@injectable()
export class MessagesApi {
  constructor(
    @inject(CHAT_SERVICE) private readonly chat: ChatService,
    @inject(OPTIONS) private readonly options: GatewayOptions,
    @inject(ROUTE_SOURCE) private readonly routes: RouteSource,
    @inject(STORAGE) private readonly storage: Storage,
    @inject(PLUGIN_HOST) private readonly plugins: PluginHost,
    @inject(ENVELOPES) private readonly envelopes: Envelopes,
    @inject(LOGGER) private readonly log: Logger,
  ) {
    this.dropped = new DroppedFields(log);
  }

  /** The fields an OpenAI-style route had no equivalent for, said once per route and field. */
  private readonly dropped: DroppedFields;

  async create(request: IncomingMessage, response: ServerResponse, caller: Caller): Promise<void> {
    const bytes = await readBodyBytes(request, this.options.bodyLimit);
    const parsed = parseJsonBody(bytes);
    noteRequestedModel(response, parsed);
    const lookup = this.lookup(parsed);
    const carriedRoute = this.carriedRoute(parsed, lookup);
    if (carriedRoute) return this.carry(request, response, caller, { bytes, body: carriedRoute.body, model: carriedRoute.model }, lookup);
    const body = validateMessagesRequest(parsed);
    const resolved = this.route(body.model, response, caller, lookup);
    const stream = body.stream === true;
    const anthropic = isAnthropicRoute(resolved);
    const chatRequest = toChatRequest(body, { anthropic, betas: headerOf(request, "anthropic-beta") });
    if (!anthropic) this.dropped.note("messages", body.model, droppedKeys(body));
    // the carriers a client's thinking blocks bring back (an Anthropic route's own blocks, or carrierd's envelope) replace the store's for their messages
    const sealed = anthropic
      ? clientThinking(body.messages, chatRequest.messages, resolved)
      : await openThinkingSignatures(this.envelopes, body.messages, chatRequest.messages, resolved, caller.keyHash, this.log);
    const run = await startTurn(this.chat, chatRequest, response, {
      keyHash: caller.keyHash,
      // the session a name means is the caller's of that name (session-scope.ts)
      explicitSession: explicitSessionOf(request, caller),
      sessionScope: sessionScopeOf(caller),
      compacted: contextCompacted(request),
      stream,
      sealed,
      route: { table: lookup.table, resolved },
      client: { options: this.options, failureFrame: errorEvent, keepaliveFrame: PING },
    });
    const identity: MessageIdentity = { id: `msg_${run.turnId.slice(5)}`, model: run.model };
    const blocks: BlockView = {
      upstreamSignatures: anthropic,
      omitThinkingText: body.thinking?.display === "omitted" && !anthropic,
      sealedAs: anthropic ? undefined : { plugin: resolved.provider.plugin, provider: resolved.provider.id, upstreamModel: resolved.upstreamModel },
    };
    if (stream) await this.streamMessage(run, response, identity, blocks, caller.keyHash);
    else await this.respondWhole(run, response, identity, blocks, caller.keyHash);
  }

  /**
   * Whether the request goes to a route whose upstream speaks the Messages
   * API itself: then it is carried as the client sent it, every field with
   * it (docs/api.md#carried-requests), and the provider judges it. A body
   * without a model name or a list of messages is refused here as before.
   */
  private carriedRoute(parsed: unknown, lookup: ModelLookup): { body: JsonObject; model: string } | undefined {
    if (!isRecord(parsed) || typeof parsed.model !== "string" || !Array.isArray(parsed.messages)) return undefined;
    const resolved = lookup.resolved;
    if (!resolved || this.plugins.registry.get(resolved.provider.plugin)?.definition.wire !== "anthropic-messages") return undefined;
    return { body: parsed as JsonObject, model: parsed.model };
  }

  /** A request carried to an Anthropic route: the turn reads its view, the upstream gets its bytes, the client the upstream's answer. */
  private async carry(
    request: IncomingMessage,
    response: ServerResponse,
    caller: Caller,
    sent: { bytes: Buffer; body: JsonObject; model: string },
    lookup: ModelLookup,
  ) {
    const resolved = this.route(sent.model, response, caller, lookup);
    const view = carriedView(sent.body, sent.model);
    const chatRequest = toChatRequest(view, { anthropic: true });
    const stream = sent.body.stream === true;
    const failureFrame = carriedErrorFrame(errorEvent);
    let run: TurnRun;
    try {
      run = await startTurn(this.chat, chatRequest, response, {
        keyHash: caller.keyHash,
        explicitSession: explicitSessionOf(request, caller),
        sessionScope: sessionScopeOf(caller),
        stream,
        sealed: clientThinking(view.messages, chatRequest.messages, resolved),
        carried: carriedRequest(request, sent.bytes, "anthropic-"),
        route: { table: lookup.table, resolved },
        client: { options: this.options, failureFrame, keepaliveFrame: PING },
      });
    } catch (error) {
      if (sendCarriedRefusal(response, error, failureFrame)) return;
      throw error;
    }
    const session = { "x-session-id": sessionName(run.sessionId) };
    if (stream) await streamTurn(run, response, new CarriedStream(response, run, session, failureFrame), this.log);
    else await sendCarriedWhole(run, response, session);
  }

  /**
   * POST /v1/messages/count_tokens: an Anthropic route's own count, asked of
   * the upstream; any other route's is carrierd's estimate of the request as
   * it would go upstream, replayed reasoning included.
   */
  async countTokens(request: IncomingMessage, response: ServerResponse, caller: Caller): Promise<void> {
    const bytes = await readBodyBytes(request, this.options.bodyLimit);
    const parsed = parseJsonBody(bytes);
    noteRequestedModel(response, parsed);
    // an Anthropic route counts the request as the client sent it: the provider judges it, as it judges the request itself
    const lookup = this.lookup(parsed);
    const carried = this.carriedRoute(parsed, lookup);
    if (carried) {
      const resolved = this.route(carried.model, response, caller, lookup);
      if (countsUpstream(resolved)) {
        const apiKey = resolved.provider.apiKeyEnv ? this.options.env[resolved.provider.apiKeyEnv] : undefined;
        const answer = await upstreamCount(resolved, bytes, apiKey, carriedRequest(request, bytes, "anthropic-").headers);
        response.writeHead(answer.status, { "content-type": "application/json", "content-length": Buffer.byteLength(answer.body) });
        response.end(answer.body);
        return;
      }
    }
    const body = validateCountTokensRequest(parsed);
    const resolved = this.route(body.model, response, caller, lookup);
    const chatRequest = toChatRequest(body, { anthropic: false });
    const context = { storage: this.storage, registry: this.plugins.registry, env: this.options.env, table: this.routes.current };
    const sealed = await openThinkingSignatures(this.envelopes, body.messages, chatRequest.messages, resolved, caller.keyHash, this.log);
    sendJson(response, 200, {
      input_tokens: await estimateInputTokens(context, chatRequest, resolved, {
        keyHash: caller.keyHash,
        explicit: explicitSessionOf(request, caller),
        sessionScope: sessionScopeOf(caller),
        sealed,
      }),
    });
  }

  /**
   * The route of the model a body asks for, looked up once per request on the
   * table in force: whether it is carried, the checks below and the turn all
   * read this one (a body without a model name has none; its check refuses it).
   */
  private lookup(parsed: unknown): ModelLookup {
    const table = this.routes.current;
    const model = isRecord(parsed) && typeof parsed.model === "string" ? parsed.model : undefined;
    return { table, resolved: model === undefined ? undefined : table.resolveModel(model) };
  }

  /** The request's route: the key may use the model, the model is in routes.yaml, its provider has its key. */
  private route(model: string, response: ServerResponse, caller: Caller, { resolved }: ModelLookup): ResolvedModel {
    noteModel(response, model);
    requireModel(caller, model);
    if (!resolved) throw new GatewayError("model_not_found", `model: ${model} does not exist in routes.yaml`, "model");
    requireProviderKeyOf(resolved, model, this.options.env, this.chat.plugins.registry);
    return resolved;
  }

  private async streamMessage(run: TurnRun, response: ServerResponse, identity: MessageIdentity, view: BlockView, keyHash: string): Promise<void> {
    const signer: BlockSigner = {
      sealSoFar: (blocks, producer) => this.sealSoFar(blocks, run, producer, keyHash),
      signatureOf: (blocks) => this.signatureOf(blocks, run, keyHash),
      lateSignature: (blocks) => this.lateSignature(blocks, run, keyHash),
    };
    const stream = new MessageStream(response, { "x-session-id": sessionName(run.sessionId) }, this.options.keepaliveSeconds, identity, view, signer);
    await streamTurn(run, response, stream, this.log);
  }

  private async respondWhole(run: TurnRun, response: ServerResponse, identity: MessageIdentity, view: BlockView, keyHash: string): Promise<void> {
    const blocks = new MessageBlocks(view);
    await readTurn(run, (part) => blocks.add(part));
    blocks.finish();
    const turn = await run.complete();
    blocks.seal(await this.signatureOf(blocks, run, keyHash));
    const body = messageObject(identity, blocks.content(), stopReasonOf(turn.finishReason, turn.stopSequence), anthropicUsage(turn.usage));
    sendJson(response, 200, body, { "x-session-id": sessionName(run.sessionId) });
  }

  /** The envelope of the turn's reasoning so far; undefined (blocks unsigned, the store decides later) when it cannot be sealed. */
  private async sealSoFar(blocks: MessageBlocks, run: TurnRun, producer: SealedProducer, keyHash: string): Promise<string | undefined> {
    const carriers = {
      ...producer,
      id: run.turnId,
      sessionId: run.sessionId,
      reasoningText: blocks.reasoningSoFar,
      reasoningDetails: undefined,
      nativeRecord: undefined,
    };
    try {
      return await thinkingSignature(this.envelopes, carriers, keyHash);
    } catch (error) {
      this.log.warn({ err: error, session_id: run.sessionId }, "the turn's thinking could not be sealed; its blocks go out unsigned");
      return undefined;
    }
  }

  /**
   * The envelope of the whole stored turn, when its thinking blocks were
   * signed as they ended and carriers arrived after them (a
   * `reasoning_details` list, a plugin's native record: OpenRouter, Gemini,
   * Bedrock, Copilot); undefined when the early signatures hold it all.
   */
  private async lateSignature(blocks: MessageBlocks, run: TurnRun, keyHash: string): Promise<string | undefined> {
    const stored = run.stored;
    if (!stored || !blocks.hasThinking || (!stored.reasoningDetails?.length && !stored.nativeRecord)) return undefined;
    return this.signatureOf(blocks, run, keyHash, true);
  }

  /**
   * The thinking blocks' signature once the turn is stored: the envelope of
   * its carriers. An envelope that cannot be sealed (the store holding the
   * envelope keys does not answer) leaves the signature empty: the client's
   * next request finds the stored turn instead, as a stateless client's does.
   */
  private async signatureOf(blocks: MessageBlocks, run: TurnRun, keyHash: string, late = false): Promise<string | undefined> {
    if ((!late && !blocks.awaitsSignature) || !run.stored) return undefined;
    try {
      return await thinkingSignature(this.envelopes, run.stored, keyHash);
    } catch (error) {
      this.log.warn({ err: error, session_id: run.sessionId }, "the turn's thinking could not be sealed; its blocks go out unsigned");
      return undefined;
    }
  }
}

/** A request's model looked up: the table it was looked up in, and its route there (undefined: no model name, or no route for it). */
interface ModelLookup {
  readonly table: RouteTable;
  readonly resolved: ResolvedModel | undefined;
}

/** A request header's value, several sent as one comma-separated list. */
function headerOf(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(",") : value;
}

/** Whether the route speaks the Messages API itself (the anthropic plugin: Anthropic, Vertex AI, Foundry). */
export function isAnthropicRoute(resolved: ResolvedModel): boolean {
  return resolved.provider.plugin === "anthropic";
}

/** The session X-Session-Id (the server has checked it) or Claude Code's own session id names, as the caller's stored id. */
function explicitSessionOf(request: IncomingMessage, caller: Caller): string | undefined {
  const name = clientSessionName(request);
  return name === undefined ? undefined : storedSessionId(name, sessionScopeOf(caller));
}

import type { IncomingMessage, ServerResponse } from "node:http";
import { inject, injectable } from "tsyringe";
import { sessionName, sessionScopeOf, storedSessionId } from "../../conversation/session-scope.js";
import { requireProviderKey } from "../provider-keys.js";
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
import { noteModel } from "../../foundation/logging/access-log.js";
import type { Logger } from "../../foundation/logging/logger.js";
import type { PluginHost } from "../../providers/plugin-host.js";
import type { ResolvedModel } from "../../routing/routes/route-table.js";
import type { RouteSource } from "../../routing/routes/route-source.js";
import type { Storage } from "../../storage/storage.js";
import { estimateInputTokens } from "../messages/count-tokens.js";
import { thinkingSignature } from "../messages/thinking-signature.js";
import { CarriedStream, carriedErrorFrame, carriedRequest, sendCarriedRefusal, sendCarriedWhole } from "../carried/carried-answer.js";
import { geminiFailureFrame } from "./errors.js";
import { finishReasonOf, responseObject, usageMetadata, type ResponseIdentity } from "./final-object.js";
import { countedRequest, validateGenerateRequest, type GenerateContentRequest } from "./request.js";
import { ResponseParts } from "./response-parts.js";
import { GeminiStream } from "./stream.js";
import { openThoughtSignatures } from "./thought-signatures.js";
import { includesThoughts, toChatRequest } from "./to-chat-request.js";

/** How a request asks for its answer: whole, as server-sent events (`?alt=sse`), or as a JSON array of chunks (`streamGenerateContent` without it). */
export type AnswerForm = "whole" | "sse" | "array";

/**
 * `POST /v1beta/models/{model}:generateContent`, `:streamGenerateContent`
 * and `:countTokens`: the Gemini API on top of the chat path every route
 * serves. The request becomes the gateway's turn request (toChatRequest),
 * the turn runs as any other (the same session storage, replay, events,
 * metrics), and its parts are rendered as Gemini parts (ResponseParts), the
 * turn's carriers sealed into the thoughtSignature of its first function
 * call so a client that sends it back replays the turn exactly.
 */
@injectable()
export class GeminiApi {
  constructor(
    @inject(CHAT_SERVICE) private readonly chat: ChatService,
    @inject(OPTIONS) private readonly options: GatewayOptions,
    @inject(ROUTE_SOURCE) private readonly routes: RouteSource,
    @inject(STORAGE) private readonly storage: Storage,
    @inject(PLUGIN_HOST) private readonly plugins: PluginHost,
    @inject(ENVELOPES) private readonly envelopes: Envelopes,
    @inject(LOGGER) private readonly log: Logger,
  ) {}

  async generate(request: IncomingMessage, response: ServerResponse, caller: Caller, model: string, form: AnswerForm): Promise<void> {
    const resolved = this.route(model, response, caller);
    const bytes = await readBodyBytes(request, this.options.bodyLimit);
    const body = validateGenerateRequest(parseJsonBody(bytes));
    if (this.plugins.registry.get(resolved.provider.plugin)?.definition.wire === "gemini")
      return this.carry(request, response, caller, { model, bytes, body, resolved, form });
    const stream = form === "sse";
    const chatRequest = toChatRequest(model, body, { gemini: isGeminiRoute(resolved) }, stream);
    // the carriers a function call's thoughtSignature brings back (carrierd's envelope) replace the store's for its model content
    const sealed = await openThoughtSignatures(this.envelopes, body.contents, chatRequest.messages, resolved, caller.keyHash, this.log);
    const run = await startTurn(this.chat, chatRequest, response, {
      keyHash: caller.keyHash,
      explicitSession: explicitSessionOf(request, caller),
      sessionScope: sessionScopeOf(caller),
      stream,
      sealed,
      client: { options: this.options, failureFrame: geminiFailureFrame },
    });
    const identity: ResponseIdentity = { responseId: run.turnId.slice(5), modelVersion: run.model };
    const thoughts = includesThoughts(body);
    const headers = { "x-session-id": sessionName(run.sessionId) };
    if (stream) {
      const writer = new GeminiStream(response, headers, this.options.keepaliveSeconds, identity, thoughts, () => this.signatureOf(run, caller.keyHash));
      await streamTurn(run, response, writer, this.log);
      return;
    }
    const parts = new ResponseParts(thoughts);
    await readTurn(run, (part) => parts.add(part));
    const turn = await run.complete();
    const signature = parts.hasCalls ? await this.signatureOf(run, caller.keyHash) : undefined;
    const whole = responseObject(identity, [...parts.shown, ...parts.closing(signature)], {
      reason: finishReasonOf(turn.finishReason),
      usage: usageMetadata(turn.usage),
    });
    sendJson(response, 200, form === "array" ? [whole] : whole, headers);
  }

  /**
   * A request carried to a Gemini route (docs/architecture.md#two-paths):
   * the turn reads what it needs of the body (its contents, for sessions and
   * replay), the upstream gets the client's bytes with only the listed
   * changes (docs/api.md#carried-requests), and the client gets the
   * upstream's answer as it was sent.
   */
  private async carry(request: IncomingMessage, response: ServerResponse, caller: Caller, sent: CarriedGemini): Promise<void> {
    const stream = sent.form === "sse";
    const chatRequest = toChatRequest(sent.model, sent.body, { gemini: true, carried: true }, stream);
    const sealed = await openThoughtSignatures(this.envelopes, sent.body.contents, chatRequest.messages, sent.resolved, caller.keyHash, this.log);
    const failureFrame = carriedErrorFrame(geminiFailureFrame, false);
    let run: TurnRun;
    try {
      run = await startTurn(this.chat, chatRequest, response, {
        keyHash: caller.keyHash,
        explicitSession: explicitSessionOf(request, caller),
        sessionScope: sessionScopeOf(caller),
        stream,
        sealed,
        // the JSON-array form is asked of Gemini as the client asked it
        carried: { ...carriedRequest(request, sent.bytes, "x-goog-"), ...(sent.form === "array" ? { verb: "streamGenerateContent" } : {}) },
        client: { options: this.options, failureFrame },
      });
    } catch (error) {
      if (sendCarriedRefusal(response, error, failureFrame)) return;
      throw error;
    }
    const headers = { "x-session-id": sessionName(run.sessionId) };
    if (stream) await streamTurn(run, response, new CarriedStream(response, run, headers, failureFrame), this.log);
    else await sendCarriedWhole(run, response, headers);
  }

  /**
   * `:countTokens`: carrierd's estimate of the request as it would go
   * upstream, replayed reasoning included (the Messages door's count, a
   * token per four UTF-8 bytes), on every route.
   */
  async countTokens(request: IncomingMessage, response: ServerResponse, caller: Caller, model: string): Promise<void> {
    const resolved = this.route(model, response, caller);
    const body: GenerateContentRequest = countedRequest(parseJsonBody(await readBodyBytes(request, this.options.bodyLimit)));
    const chatRequest = toChatRequest(model, body, { gemini: isGeminiRoute(resolved) }, false);
    const context = { storage: this.storage, registry: this.plugins.registry, env: this.options.env, table: this.routes.current };
    const sealed = await openThoughtSignatures(this.envelopes, body.contents, chatRequest.messages, resolved, caller.keyHash, this.log);
    const totalTokens = await estimateInputTokens(context, chatRequest, resolved, {
      keyHash: caller.keyHash,
      explicit: explicitSessionOf(request, caller),
      sessionScope: sessionScopeOf(caller),
      sealed,
    });
    sendJson(response, 200, { totalTokens });
  }

  /** The request's route: the key may use the model, the model is in routes.yaml, its provider has its key. */
  private route(model: string, response: ServerResponse, caller: Caller): ResolvedModel {
    noteModel(response, model);
    requireModel(caller, model);
    const resolved = this.routes.current.resolveModel(model);
    if (!resolved) throw new GatewayError("model_not_found", `models/${model} is not found in routes.yaml`, "model");
    requireProviderKey(this.routes.current, model, this.options.env, this.chat.plugins.registry);
    return resolved;
  }

  /**
   * The thoughtSignature of a turn that called tools, once it is stored:
   * the envelope of its carriers, when it has any. One that cannot be sealed (the store holding
   * the envelope keys does not answer) is left out: the client's next
   * request finds the stored turn instead, as a stateless client's does.
   */
  private async signatureOf(run: TurnRun, keyHash: string): Promise<string | undefined> {
    const stored = run.stored;
    if (!stored || (!stored.reasoningText && !stored.reasoningDetails && !stored.nativeRecord)) return undefined;
    try {
      return await thinkingSignature(this.envelopes, stored, keyHash);
    } catch (error) {
      this.log.warn({ err: error, session_id: run.sessionId }, "the turn's carriers could not be sealed; its function call goes out unsigned");
      return undefined;
    }
  }
}

/** A Gemini-door request on a Gemini route, as the client sent it. */
interface CarriedGemini {
  readonly model: string;
  readonly bytes: Buffer;
  readonly body: GenerateContentRequest;
  readonly resolved: ResolvedModel;
  readonly form: AnswerForm;
}

/** Whether the route speaks the Gemini API itself (the gemini plugin). */
export function isGeminiRoute(resolved: ResolvedModel): boolean {
  return resolved.provider.plugin === "gemini";
}

/** The session X-Session-Id names, as the caller's stored id (the server has checked the header). */
function explicitSessionOf(request: IncomingMessage, caller: Caller): string | undefined {
  const header = request.headers["x-session-id"];
  return typeof header === "string" ? storedSessionId(header, sessionScopeOf(caller)) : undefined;
}

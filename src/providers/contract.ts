/**
 * The plugin contract: the only types a provider plugin needs from carrierd.
 *
 * A plugin turns one canonical request (an OpenAI chat-completions body whose
 * messages already carry exactly the reasoning the route may read) into its
 * provider's wire format, and the provider's answer back into canonical
 * stream parts. The core never learns a provider's fields: provider-private
 * reasoning travels as an opaque `native-record` the plugin owns.
 */

import type { Json, JsonObject } from "../foundation/util/json.js";

// the JSON types live on the ground floor (util/); the contract hands them on, so plugins find them here
export type { Json, JsonObject };

/** Bumped on any breaking change of this file. A plugin declares the version it was written for. */
export const PLUGIN_API_VERSION = 1;

/**
 * The standard OpenAI-style reasoning carrier fields (docs/routes.md#what-a-route-sets): three on the
 * assistant message, and `extra_content`, the object on each of its tool
 * calls (`tool_calls[i].extra_content`, where Gemini's OpenAI-compatible
 * endpoint returns its thought signatures).
 */
export type CarrierField = "reasoning_content" | "reasoning" | "reasoning_details" | "extra_content";
export const CARRIER_FIELDS: readonly CarrierField[] = ["reasoning_content", "reasoning", "reasoning_details", "extra_content"];

/** Whether a name (a client's, an upstream's, a plugin's) is one of the carrier fields. */
export function isCarrierField(name: unknown): name is CarrierField {
  return CARRIER_FIELDS.some((field) => field === name);
}

/** One tool call as OpenAI chat completions spells it. */
export interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
  /** Provider data about this call (Gemini's `{google: {thought_signature}}`); the `extra_content` carrier field. */
  extra_content?: JsonObject;
}

/** A chat message in the canonical (OpenAI chat-completions) shape. Unknown keys pass through. */
export interface ChatMessage {
  role: "system" | "developer" | "user" | "assistant" | "tool";
  content?: string | JsonObject[] | null;
  name?: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  reasoning_content?: string;
  reasoning?: string;
  reasoning_details?: Json[];
  /**
   * The stored native record of this turn. Replay sets it only when the
   * route's plugin owns the record (replay rule 6, docs/sessions-and-replay.md#replay-rules); that plugin's codec turns
   * it into wire fields and must never send this key itself.
   */
  native_record?: JsonObject;
  [key: string]: unknown;
}

/**
 * The canonical request body: OpenAI chat completions, with OpenAI's own
 * names (`developer` messages, `max_completion_tokens` or `max_tokens`); a
 * plugin re-spells them for its upstream (see RequestDialect).
 */
export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  stream?: boolean;
  /** As the chat completions schema admits it (schemas/requests/chat-completions.schema.json). */
  stream_options?: { include_usage?: boolean; include_obfuscation?: boolean } | null;
  tools?: JsonObject[];
  reasoning_effort?: string;
  /** carrierd's per-request options; never sent upstream. */
  /** `replay` is the client's opt-out of replay, read as it came (docs/sessions-and-replay.md#replay-rules). */
  model_options?: { reasoning?: { enabled?: boolean; effort?: string; summary?: string }; replay?: unknown };
  [key: string]: unknown;
}

/** The request's reasoning controls (docs/api.md#reasoning-controls-both-apis), for plugins to express in their provider's native form. */
export interface ReasoningControls {
  /** false: the client asked for no reasoning; ask the upstream not to reason where it can. */
  readonly enabled: boolean;
  /** `reasoning_effort` / `reasoning.effort` as the client sent it. */
  readonly effort: string | undefined;
  /** Responses `reasoning.summary` as the client sent it (`auto`, `concise`, `detailed`); undefined when it sent none. */
  readonly summary?: string;
}

/**
 * How an OpenAI-style upstream spells what OpenAI's own API names, resolved
 * from routes.yaml `dialects` (docs/routes.md): the request's reasoning
 * controls, and the two request names not every host knows. Plugins with a
 * wire format of their own may ignore it.
 */
export interface RequestDialect {
  /** `reasoning_effort`: OpenAI's top-level string; `openrouter`: `reasoning: {effort}`; `drop`: not accepted, never sent. */
  readonly effort: "reasoning_effort" | "openrouter" | "drop";
  /** How to ask for no reasoning: OpenRouter's `reasoning.enabled: false`, `thinking: {type: disabled}`, `enable_thinking: false`, or `none` (no switch to rely on). */
  readonly disable: "openrouter" | "thinking" | "enable_thinking" | "none";
  /** The role a canonical `developer` message is sent as. */
  readonly developerRole: "developer" | "system";
  /** The name the output-token limit (`max_tokens` / `max_completion_tokens`) is sent under. */
  readonly tokenLimit: "max_tokens" | "max_completion_tokens";
}

/** The provider entry of routes.yaml, with its secret resolved from the environment. */
export interface ProviderConfig {
  readonly id: string;
  readonly plugin: string;
  readonly baseUrl?: string;
  /** Hostname of `baseUrl` without port, lower-cased; "" for in-process plugins. */
  readonly host: string;
  readonly apiKeyEnv?: string;
  /** How the key is sent, when routes.yaml `auth` says (read by openai-responses: `api-key` is Azure OpenAI's header); else the plugin decides. */
  readonly auth?: "bearer" | "api-key";
  /** Extra HTTP headers sent upstream (routes.yaml `headers`). */
  readonly headers: Readonly<Record<string, string>>;
  /** routes.yaml `deadlines`, in milliseconds; the core's transport applies its defaults when absent. */
  readonly deadlines?: UpstreamDeadlines;
}

/** How long the core's transport waits on an upstream (routes.yaml `providers.*.deadlines`). */
export interface UpstreamDeadlines {
  /** From sending the request to the head of the answer. */
  readonly firstByteMs: number;
  /** Between two reads of the answer, once it started (not counted while carrierd holds the stream for a slow client). */
  readonly idleMs: number;
  /** From sending the request to the end of the answer. */
  readonly totalMs: number;
}

/** For a provider whose routes.yaml entry leaves a deadline out (docs/routes.md). */
export const DEFAULT_DEADLINES: UpstreamDeadlines = Object.freeze({ firstByteMs: 300_000, idleMs: 60_000, totalMs: 1_800_000 });

/** What the route table resolved for one request: who receives which carrier. */
export interface CarrierPolicy {
  readonly fields: readonly CarrierField[];
  readonly mustEcho: boolean;
  readonly requestExtra: JsonObject | undefined;
  readonly native: boolean;
  readonly replay: "signed" | "unsigned" | "stripped" | undefined;
  /** Index of the matching carriers route, for logs and `routes explain`. */
  readonly routeIndex: number;
}

/** Everything a plugin gets to make one upstream call. */
export interface UpstreamCall {
  readonly provider: ProviderConfig;
  /** The provider's API key, read from `api_key_env`; undefined when unset. */
  readonly apiKey: string | undefined;
  /** Upstream model name. */
  readonly model: string;
  /** Canonical body, replay already applied, `model` already the upstream name. */
  readonly body: ChatRequest;
  readonly stream: boolean;
  readonly reasoning: ReasoningControls;
  /** How this upstream spells reasoning controls and OpenAI's newer request names (routes.yaml `dialects`). */
  readonly dialect: RequestDialect;
  /** The route's carrier policy; its `fields` are this call's effective ones (the route's, less verdicts and the request's opt-outs). */
  readonly policy: CarrierPolicy;
  readonly signal: AbortSignal;
  /**
   * Set when the client speaks the wire this plugin's upstream speaks (its
   * definition's `wire`): the request as the client sent it, to be carried,
   * not rebuilt (docs/architecture.md#two-paths). `body` keeps its job: its
   * assistant messages say what replay decided (a `native_record` to splice in).
   */
  readonly carried?: CarriedRequest;
}

/** The wire APIs carrierd's doors speak and a plugin's upstream may speak too (PluginDefinition.wire). */
export type WireApi = "anthropic-messages" | "openai-responses" | "openai-chat" | "gemini";

/**
 * Marks a native record a door made of the request it goes back in: one
 * message's own reasoning blocks, every one the client sent in it, in its
 * order (the Messages door's thinking blocks on an Anthropic route). A
 * carried body leaves a message whose record has it as the client sent it,
 * without reading its blocks again. A symbol-keyed property: JSON never
 * writes it, and setting it costs less than adding to a weak collection.
 */
export const AS_SENT: unique symbol = Symbol("reasoning blocks as the client sent them");

/** Whether a native record is a message's reasoning blocks exactly as the client sent them in this request (see AS_SENT). */
export function isAsSent(record: unknown): boolean {
  return typeof record === "object" && record !== null && AS_SENT in record;
}

/** A client's request on a route whose upstream speaks the client's wire: carried as sent, but for what carrierd must change. */
export interface CarriedRequest {
  /** The body's bytes as the client sent them. */
  readonly bytes: Buffer;
  /** The client's headers of the provider's family (`anthropic-*`, `openai-*`), lower-cased, as sent. */
  readonly headers: Readonly<Record<string, string>>;
  /**
   * The path's `:verb` the client called, when the upstream's URL names one
   * and it says more than `stream` does: Gemini's `streamGenerateContent`
   * without `alt=sse`, answered as one JSON array of the stream's chunks.
   */
  readonly verb?: string;
  /**
   * Where each assistant message of the turn's view came from in the body, in
   * order, when the door's wire keeps a turn in several elements of one
   * array (the Responses API's `input` items): the element indices of each.
   * The codec finds the client's items of a turn by them, not by counting.
   */
  readonly assistantItems?: readonly (readonly number[])[];
  /** What routes.yaml sets for the route (`models[].params`, `request_extra`); the turn adds it. */
  readonly settings?: { readonly defaults: JsonObject | undefined; readonly overrides: JsonObject | undefined };
}

/** Usage in OpenAI's chat shape. */
export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  completion_tokens_details?: { reasoning_tokens?: number };
  /** `cache_write_tokens`: prompt tokens written to the provider's cache (Anthropic's `cache_creation_input_tokens`, in OpenRouter's name). */
  prompt_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number };
  [key: string]: unknown;
}

/** Canonical stream parts: what every plugin's answer is turned into. */
export type StreamPart =
  | { type: "reasoning-delta"; text: string }
  | { type: "text-delta"; text: string }
  /** A fragment of a tool call, OpenAI-style: `index` groups fragments; id and name arrive once. */
  | { type: "tool-call-delta"; index: number; id?: string; name?: string; arguments?: string }
  /** Fragments of the provider's `reasoning_details` array, merged by `index` (docs/sessions-and-replay.md#what-is-stored). */
  | { type: "reasoning-details-delta"; details: JsonObject[] }
  /** A fragment of the plugin's private record; the plugin merges fragments itself via `mergeNative`. */
  | { type: "native-record"; record: JsonObject }
  | { type: "usage"; usage: Usage }
  /**
   * Log probabilities of the answer's tokens, when the client asked for them
   * and the upstream gave them, in OpenAI's chat shape: entries of
   * `choices[].logprobs.content` (`token`, `logprob`, `bytes`, `top_logprobs`).
   */
  | { type: "logprobs"; content: JsonObject[] }
  /** `stopSequence`: the stop sequence that ended the answer, when the upstream names it (Anthropic's `stop_sequence`, vLLM's `stop_reason`). */
  | { type: "finish"; reason: string; stopSequence?: string }
  /**
   * Upstream metadata worth keeping (its response id, its model) and what a
   * chat completions client is told of how it was served: the tier
   * (`service_tier`, Anthropic's `usage.service_tier` in OpenAI's words) and
   * the backend's `system_fingerprint`, when the upstream names them.
   */
  | { type: "response-metadata"; id?: string; model?: string; serviceTier?: string; systemFingerprint?: string }
  /**
   * The bytes of the answer of a carried call (UpstreamCall.carried), as the
   * upstream sent them, before the parts decoded from them: the core's
   * transport adds them, a plugin never yields them. The client's door
   * writes them on unchanged.
   */
  | { type: "answer-bytes"; bytes: Buffer };

/**
 * What a plugin's answer yields: parts one at a time, or the parts decoded
 * from one network read together — cheaper, one await for all of them (the
 * core's HTTP transport does that).
 */
export type StreamItem = StreamPart | readonly StreamPart[];

/** The parts of one stream item, as an array. */
export function partsOf(item: StreamItem): readonly StreamPart[] {
  return isPartList(item) ? item : [item];
}

// Array.isArray does not narrow a readonly array out of a union (TypeScript narrows it to any[])
function isPartList(item: StreamItem): item is readonly StreamPart[] {
  return Array.isArray(item);
}

/** The result of one upstream call, known before anything reaches the client. */
export type UpstreamResult =
  /** `head`: a carried call's answer status and the headers the client is given with it (CarriedAnswerHead). */
  | { ok: true; parts: AsyncIterable<StreamItem>; head?: CarriedAnswerHead }
  /** `headers`: the upstream's answer headers worth passing on (Retry-After, rate limits), lower-cased. */
  | { ok: false; status: number; body: string; headers?: Readonly<Record<string, string>> };

/** The status and headers of a carried call's answer that reach its client (content type, request id, rate limits, `x-should-retry`). */
export interface CarriedAnswerHead {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * Thrown by a stream decoder for an event it cannot read (not JSON, not an
 * object). The turn ends as an incomplete one: dropping the event would
 * lose its content for the client and the stored turn alike.
 */
export class UnreadableChunkError extends Error {
  constructor(readonly data: string) {
    super(`the upstream sent a stream event that cannot be read: ${JSON.stringify(data.length > 80 ? `${data.slice(0, 80)}…` : data)}`);
    this.name = "UnreadableChunkError";
  }
}

/**
 * Thrown by a stream decoder for an error the upstream reported inside its
 * 200 answer (an error event or chunk, a failed response); `detail` is the
 * upstream's error object. One with a string `code` reaches OpenAI-wire
 * clients with the upstream's code (docs/api.md#upstream-errors).
 */
export class UpstreamReportedError extends Error {
  constructor(
    readonly detail: JsonObject,
    message: string,
  ) {
    super(message);
    this.name = "UpstreamReportedError";
  }
}

/**
 * How an HTTP-based plugin speaks its provider's wire format. The core owns
 * the connection pool and the SSE parser; the codec only converts.
 */
export interface HttpCodec {
  /** `body` as text or as bytes (UTF-8). */
  buildRequest(call: UpstreamCall): { url: string; headers: Record<string, string>; body: string | Buffer };
  /** A non-streaming response body, parsed. */
  decodeResponse(body: JsonObject): StreamPart[];
  /**
   * Returns a stateful decoder for one stream's SSE events. An event decodes
   * to its parts, or to one part on its own (most events of a stream are one
   * delta: no array per event); read it with `partsOf`.
   */
  createStreamDecoder(): (event: { event?: string; data: string }) => StreamItem;
  /**
   * The upstream request for a carried call (UpstreamCall.carried): the
   * client's bytes with only what carrierd must change spliced in (the model
   * name, the replayed carriers, the route's settings). A codec whose
   * definition declares a `wire` has it.
   */
  buildCarriedRequest?(call: UpstreamCall, carried: CarriedRequest): { url: string; headers: Record<string, string>; body: Buffer | BodyPieces };
}

/**
 * A request body sent as the pieces it is made of, in order, `byteLength`
 * bytes in all: a large carried body, the client's bytes between carrierd's
 * changes, never copied into one buffer (src/providers/carried/splices.ts).
 */
export interface BodyPieces {
  readonly pieces: readonly Uint8Array[];
  readonly byteLength: number;
}

/** One HTTP request a plugin built itself, for `PluginContext.http.post`. */
export interface RawRequest {
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** The answer to a `RawRequest`: its status, and its body read as it arrives (or whole, with `text()`). */
export interface RawAnswer {
  readonly status: number;
  readonly body: AsyncIterable<Uint8Array> & { text(): Promise<string> };
}

/** Services the core hands to a plugin factory. */
export interface PluginContext {
  readonly http: {
    /** Sends a call through the core's keep-alive pool and SSE parser. */
    send(codec: HttpCodec, call: UpstreamCall): Promise<UpstreamResult>;
    /**
     * POSTs a request whose answer the plugin reads itself (a framing that
     * is not SSE, such as AWS's binary event stream), through the same pool
     * and under the same routes.yaml deadlines and cancellation as `send`:
     * a deadline that passes fails the request, or the body's next read,
     * with the same `upstream_timeout` error.
     */
    post(call: UpstreamCall, request: RawRequest): Promise<RawAnswer>;
  };
  readonly log: { debug(obj: object, msg?: string): void; info(obj: object, msg?: string): void; warn(obj: object, msg?: string): void };
}

/** A provider plugin instance. */
export interface ProviderPlugin {
  invoke(call: UpstreamCall): Promise<UpstreamResult>;
  /**
   * Error classifier: given an upstream 4xx and the carrier fields the failing
   * request sent, names the field the provider rejected as unknown, if any.
   */
  classifyError?(status: number, body: string, sentFields: readonly string[]): string | undefined;
  /** Folds a new native-record fragment into what was collected so far. Default: shallow merge. */
  readonly mergeNative?: (collected: JsonObject | undefined, fragment: JsonObject) => JsonObject;
}

/** What a plugin folder's entry module default-exports. */
export interface PluginDefinition {
  readonly name: string;
  readonly apiVersion: number;
  /** One line for `plugins list`. */
  readonly description: string;
  /**
   * The private record type this plugin owns, with the JSON Schema the store
   * validates it against. `field`: the carrier field the record holds
   * (openai-compatible's holds `extra_content`); it then goes only to routes
   * where that field is effective, and a route without it reads no record.
   */
  readonly native?: { readonly type: string; readonly schema: object; readonly field?: CarrierField };
  /**
   * What must be set before `provider` can be called, named for the
   * operator ("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"), or undefined
   * when `env` has it. Without it the provider needs only the variable its
   * `api_key_env` names, when it names one. A provider with something
   * missing is hidden from `/v1/models`, refused with 503
   * `provider_not_configured`, and named by `carrierd routes check`.
   */
  missingCredentials?(provider: ProviderConfig, env: Readonly<Record<string, string | undefined>>): string | undefined;
  /**
   * Hosted tool types (`web_search`, `code_interpreter`, …) this plugin hands
   * on to an upstream that runs them itself; the request's tool entry reaches
   * the plugin verbatim. Undeclared types are left out of the upstream
   * request or refused, as routes.yaml `hosted_tools` says.
   */
  readonly hostedTools?: readonly string[];
  /**
   * The wire API the upstream speaks, when it is one of carrierd's doors':
   * a client of that door is carried, not translated (UpstreamCall.carried),
   * and the plugin's codec builds the request with `buildCarriedRequest`.
   */
  readonly wire?: WireApi;
  create(context: PluginContext): ProviderPlugin;
}

/**
 * Thrown by a plugin with its own transport when its stream ended without
 * the event that finishes an answer (the core's SSE transport checks this
 * itself): the turn is incomplete and is not stored.
 */
export class IncompleteStreamError extends Error {
  constructor(message = "the upstream ended its stream before it finished the answer") {
    super(message);
    this.name = "IncompleteStreamError";
  }
}

/** Identity helper that gives plugin authors type checking. */
export function definePlugin(definition: PluginDefinition): PluginDefinition {
  return definition;
}

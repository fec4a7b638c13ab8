import type { AssistantTurn } from "../../../src/routing/carriers/turn-accumulator.js";
import { TurnAccumulator } from "../../../src/routing/carriers/turn-accumulator.js";
import type {
  CarrierPolicy,
  ChatMessage,
  ChatRequest,
  HttpCodec,
  JsonObject,
  ProviderConfig,
  RequestDialect,
  StreamPart,
  UpstreamCall,
} from "../../../src/providers/contract.js";
import { resolveDialect } from "../../../src/routing/routes/request-dialect.js";

export const POLICY: CarrierPolicy = { fields: [], mustEcho: false, requestExtra: undefined, native: true, replay: undefined, routeIndex: 0 };

/** An UpstreamCall as the core builds it, for driving a codec directly. */
export function upstreamCall(options: {
  plugin: string;
  baseUrl: string;
  model: string;
  body: Omit<ChatRequest, "model">;
  stream?: boolean;
  effort?: string;
  enabled?: boolean;
  apiKey?: string;
  headers?: Record<string, string>;
  policy?: Partial<CarrierPolicy>;
  /** Default: what a route table without `dialects` resolves for the host. */
  dialect?: RequestDialect;
}): UpstreamCall {
  const url = new URL(options.baseUrl);
  const provider: ProviderConfig = {
    id: options.plugin,
    plugin: options.plugin,
    baseUrl: options.baseUrl,
    host: url.hostname.toLowerCase(),
    headers: options.headers ?? {},
  };
  const stream = options.stream ?? false;
  return {
    provider,
    apiKey: options.apiKey ?? "test-key",
    model: options.model,
    body: { ...options.body, model: options.model, stream } as ChatRequest,
    stream,
    reasoning: { enabled: options.enabled ?? true, effort: options.effort },
    dialect: options.dialect ?? resolveDialect([], provider, options.model).dialect,
    policy: { ...POLICY, ...options.policy },
    signal: new AbortController().signal,
  };
}

/** Folds parts the way the core stores a turn. */
export function fold(parts: StreamPart[], mergeNative?: (collected: JsonObject | undefined, fragment: JsonObject) => JsonObject): AssistantTurn {
  const accumulator = new TurnAccumulator(mergeNative);
  for (const part of parts) accumulator.add(part);
  return accumulator.finish();
}

/** Decodes a recorded stream with a codec's stream decoder. */
export function decodeEvents(codec: HttpCodec, events: { event?: string; data: string }[]): StreamPart[] {
  const decode = codec.createStreamDecoder();
  return events.flatMap((event) => decode(event));
}

/** The assistant message a stateless client sends back, with what replay attaches for the owning plugin. */
export function replayedAssistant(turn: AssistantTurn): ChatMessage {
  const message: ChatMessage = { role: "assistant", content: turn.content || null };
  if (turn.toolCalls.length > 0) message.tool_calls = turn.toolCalls;
  if (turn.nativeRecord) message.native_record = turn.nativeRecord;
  return message;
}

/** The body a codec puts on the wire, parsed. */
export function wireBody(codec: HttpCodec, call: UpstreamCall): { url: string; headers: Record<string, string>; body: Record<string, unknown> } {
  const request = codec.buildRequest(call);
  return { url: request.url, headers: request.headers, body: JSON.parse(request.body.toString()) as Record<string, unknown> };
}

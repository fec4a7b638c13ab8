/**
 * DI tokens: every component is resolved by one of these, never by class
 * metadata (vitest's transform emits none) and never through a global.
 */
export const OPTIONS = Symbol("GatewayOptions");
export const LOGGER = Symbol("Logger");
export const EVENT_BUS = Symbol("EventBus");
export const PLUGIN_REGISTRY = Symbol("PluginRegistry");
export const ROUTE_SOURCE = Symbol("RouteSource");
/** The Storage port (src/storage): everything carrierd keeps. */
export const STORAGE = Symbol("Storage");
export const UPSTREAM_HTTP = Symbol("UpstreamHttp");
export const CHAT_SERVICE = Symbol("ChatService");
export const PLUGIN_HOST = Symbol("PluginHost");
export const EVENT_HUB = Symbol("EventHub");
export const EVENT_FEED = Symbol("EventFeed");
export const METRICS = Symbol("GatewayMetrics");
/** The provider panel's numbers (src/operations/provider-stats). */
export const PROVIDER_STATS = Symbol("ProviderStats");
/** Each wire API's handlers (src/ingress/<api>), and the endpoint table built from them (src/gateway/endpoints.ts). */
export const CHAT_COMPLETIONS_API = Symbol("ChatCompletionsApi");
export const RESPONSES_API = Symbol("ResponsesApi");
export const MESSAGES_API = Symbol("MessagesApi");
export const GEMINI_API = Symbol("GeminiApi");
export const COMPACTOR = Symbol("Compactor");
/** The access keys in memory (src/http/keys/key-ring.ts). */
export const KEY_RING = Symbol("KeyRing");
/** Which hosted tools a route's upstream gets, for both APIs (src/ingress/hosted-tools.ts). */
export const HOSTED_TOOL_GATE = Symbol("HostedToolGate");
/** Seals and opens encrypted_content envelopes of a turn's carriers (src/routing/carriers/envelope.ts). */
export const ENVELOPES = Symbol("Envelopes");

import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { SpecWatch } from "../support/open-responses.js";
import { startDeepSeek, type DeepSeekUpstream } from "../support/openai-upstream.js";

export interface ConformanceSetup {
  gateway: TestGateway;
  upstream: DeepSeekUpstream;
  /** Every `/v1/responses` answer of `gateway.fetch` / `gateway.post`, and of SDK clients built with `spec.fetch`, checked against the Open Responses spec. */
  spec: SpecWatch;
  stop(): Promise<void>;
}

/** The daemon in process, with the demo plugin and an emulated DeepSeek behind it. */
export async function startConformance(): Promise<ConformanceSetup> {
  const upstream = await startDeepSeek({ answers: { kind: "recorded" } });
  const spec = new SpecWatch();
  const gateway = await startTestGateway({ routes: conformanceRoutes(upstream.baseUrl), env: { DEEPSEEK_API_KEY: "sk-emulated" }, spec });
  return {
    gateway,
    upstream,
    spec,
    async stop() {
      await gateway.stop();
      await upstream.close();
    },
  };
}

/** The two upstreams every conformance case runs against. */
export const MODELS = ["demo", "deepseek-reasoner"] as const;

/** routes.yaml serving `demo` (in-process) and the emulator's recordings (`deepseek-reasoner` and three other dialects), with DeepSeek's real carrier route. */
export function conformanceRoutes(baseUrl: string): string {
  return `version: 1
providers:
  demo: { plugin: demo }
  deepseek: { plugin: openai-compatible, base_url: "${baseUrl}", api_key_env: DEEPSEEK_API_KEY }
models:
  - { name: demo, provider: demo, model: demo-reasoner }
  - { name: deepseek-reasoner, provider: deepseek, model: deepseek-reasoner }
  - { name: groq-qwen, provider: deepseek, model: qwen/qwen3-32b }
  - { name: magistral, provider: deepseek, model: magistral-medium-2507 }
  - { name: qwen3-max, provider: deepseek, model: qwen3-max }
carriers:
  - match: { provider: deepseek }
    fields: [reasoning_content]
    must_echo: true
  - match: {}
    fields: [reasoning_content]
`;
}

/** The weather tool the DeepSeek recording calls. */
export const WEATHER_TOOL = {
  type: "function",
  function: {
    name: "weather",
    description: "Get the weather in a location",
    parameters: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
  },
} as const;

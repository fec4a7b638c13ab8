import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { SpecWatch } from "../support/open-responses.js";
import { conformanceRoutes, startDeepSeekEmulator, type EmulatedUpstream } from "./deepseek-emulator.js";

export interface ConformanceSetup {
  gateway: TestGateway;
  upstream: EmulatedUpstream;
  /** Every `/v1/responses` answer of `gateway.fetch` / `gateway.post`, and of SDK clients built with `spec.fetch`, checked against the Open Responses spec. */
  spec: SpecWatch;
  stop(): Promise<void>;
}

/** The daemon in process, with the demo plugin and an emulated DeepSeek behind it. */
export async function startConformance(): Promise<ConformanceSetup> {
  const upstream = await startDeepSeekEmulator();
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

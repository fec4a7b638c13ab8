import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { conformanceRoutes, startDeepSeekEmulator, type EmulatedUpstream } from "./deepseek-emulator.js";

export interface ConformanceSetup {
  gateway: TestGateway;
  upstream: EmulatedUpstream;
  stop(): Promise<void>;
}

/** The daemon in process, with the demo plugin and an emulated DeepSeek behind it. */
export async function startConformance(): Promise<ConformanceSetup> {
  const upstream = await startDeepSeekEmulator();
  const gateway = await startTestGateway({ routes: conformanceRoutes(upstream.baseUrl), env: { DEEPSEEK_API_KEY: "sk-emulated" } });
  return {
    gateway,
    upstream,
    async stop() {
      await gateway.stop();
      await upstream.close();
    },
  };
}

/** The two upstreams every conformance case runs against. */
export const MODELS = ["demo", "deepseek-reasoner"] as const;

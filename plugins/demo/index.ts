import { setTimeout as sleep } from "node:timers/promises";
import { definePlugin, type StreamPart } from "../../src/providers/plugin-api.js";
import { simulate } from "./simulate.js";

/**
 * The in-process demo: a deterministic SIMULATION of a reasoning model, so
 * `npm start` works with no keys and no network. `params.delay_ms` in
 * routes.yaml paces the stream (default 0) so reasoning visibly streams.
 */
export default definePlugin({
  name: "demo",
  apiVersion: 1,
  description: "Simulated reasoning model (a simulation, not a real model): reasons step by step, then answers or calls a tool",
  create() {
    return {
      async invoke(call) {
        const { delay_ms: delay, ...body } = call.body;
        const parts = simulate(body, call.reasoning.enabled);
        const pace = typeof delay === "number" && delay > 0 && call.stream ? delay : 0;
        return { ok: true, parts: paced(parts, pace, call.signal) };
      },
    };
  },
});

async function* paced(parts: StreamPart[], delay: number, signal: AbortSignal): AsyncIterable<StreamPart> {
  for (const part of parts) {
    if (delay > 0 && (part.type === "reasoning-delta" || part.type === "text-delta")) await sleep(delay, undefined, { signal });
    yield part;
  }
}

import { parseEventsSetting } from "../../src/foundation/config/events-setting.js";
import type { Logger } from "../../src/foundation/logging/logger.js";
import { DEMO_ROUTES, readSse, startTestGateway, type TestGateway } from "../support/gateway.js";

/** An in-process gateway whose events go through the Redis stream `stream` at `url`. */
export function startRedisGateway(url: string, stream: string, env: Record<string, string> = {}, log?: Logger): Promise<TestGateway> {
  const fullEnv = { CARRIERD_EVENTS_STREAM: stream, ...env };
  return startTestGateway({ routes: DEMO_ROUTES, env: fullEnv, log, gatewayOptions: { events: parseEventsSetting(url, fullEnv) } });
}

/** One streamed demo turn in `sessionId`, read to its end; resolves with the SSE status and whether it finished. */
export async function streamedTurn(gateway: TestGateway, sessionId: string, content = "What is 2+3?"): Promise<{ status: number; done: boolean }> {
  const response = await gateway.post(
    "/v1/chat/completions",
    { model: "demo", stream: true, messages: [{ role: "user", content }] },
    { "x-session-id": sessionId },
  );
  const { done } = await readSse(response);
  return { status: response.status, done };
}

/** The value of one series of a counter in `/metrics` (0 when absent). */
export async function metricValue(gateway: TestGateway, name: string, labels: string): Promise<number> {
  const text = await (await gateway.fetch("/metrics")).text();
  const line = text.split("\n").find((row) => row.startsWith(`${name}{${labels}}`));
  return line ? Number(line.split(" ").at(-1)) : 0;
}

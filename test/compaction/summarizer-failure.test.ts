import "reflect-metadata";
import { afterAll, afterEach, beforeAll, expect, test } from "vitest";
import { SpecWatch } from "../support/open-responses.js";
import type { GatewayEvent } from "../../src/foundation/event-bus/event-bus.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { captureLog, collectCompactions, respond, type CapturedLog } from "./support/harness.js";
import { startOpenAIUpstream, type OpenAIUpstream } from "../support/openai-upstream.js";

/**
 * When no summary can be had (here: the summariser names no model), the
 * request goes on uncompacted — losing the middle without a summary would
 * silently drop what the user said — and a warning says why. A model
 * without context_window is never compacted.
 */
let upstream: OpenAIUpstream;
let gateway: TestGateway;
let log: CapturedLog;
let compactions: GatewayEvent[];

beforeAll(async () => {
  upstream = await startOpenAIUpstream({ blobBytes: 4000, reasoningChars: 100 });
  log = captureLog();
  gateway = await startTestGateway({
    spec,
    log: log.logger,
    routes: `version: 1
providers:
  opaque: { plugin: openai-compatible, base_url: "${upstream.baseUrl("sealed")}" }
models:
  - { name: broken-summary, provider: opaque, model: opaque-1, context_window: 6000, summarizer: no-such-model }
  - { name: no-window, provider: opaque, model: opaque-1 }
carriers:
  - match: {}
    fields: [reasoning_content, reasoning_details]
`,
  });
  compactions = collectCompactions(gateway);
});
// every /v1/responses answer here is checked against the Open Responses spec
const spec = new SpecWatch();
afterEach(() => spec.verify());
afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
});

async function chain(model: string, turns: number): Promise<void> {
  let previous: string | undefined;
  for (let index = 0; index < turns; index++) {
    const result = await respond(gateway, { model, input: `Turn ${index}`, ...(previous ? { previous_response_id: previous } : {}) });
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    previous = result.body.id;
  }
}

test("a summariser that gives no summary leaves the request uncompacted, with a warning", async () => {
  await chain("broken-summary", 6);
  expect(compactions).toEqual([]);
  const warnings = log.lines.filter((line) => line.level === "warn" && line.message.startsWith("compaction failed"));
  expect(warnings.length).toBeGreaterThan(0);
  expect(warnings[0]!.object).toMatchObject({ summarizer: "no-such-model" });
  // the last request carried every turn of the chain
  expect(upstream.received.at(-1)!.body.messages.filter((message) => message.role === "assistant")).toHaveLength(5);
});

test("a model without context_window is never compacted", async () => {
  await chain("no-window", 8);
  expect(compactions).toEqual([]);
  expect(upstream.received.at(-1)!.body.messages.filter((message) => message.role === "assistant")).toHaveLength(7);
});

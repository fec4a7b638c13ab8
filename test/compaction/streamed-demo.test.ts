import "reflect-metadata";
import { afterAll, afterEach, beforeAll, expect, test } from "vitest";
import { SpecWatch } from "../support/open-responses.js";
import type { GatewayEvent } from "../../src/foundation/event-bus/event-bus.js";
import { readSse, startTestGateway, type TestGateway } from "../support/gateway.js";
import { collectCompactions } from "./support/harness.js";

/**
 * The demo model with a tiny context window and no `summarizer`: the model
 * summarises its own history, and a streamed request that compacts still
 * streams a normal response (the summary is made before anything is sent).
 */
let gateway: TestGateway;
let compactions: GatewayEvent[];

beforeAll(async () => {
  gateway = await startTestGateway({
    spec,
    routes: `version: 1
providers:
  demo: { plugin: demo }
models:
  - { name: tiny-demo, provider: demo, model: demo-reasoner, context_window: 1500 }
carriers:
  - match: {}
    fields: [reasoning_content]
`,
  });
  compactions = collectCompactions(gateway);
});
// every /v1/responses answer here is checked against the Open Responses spec
const spec = new SpecWatch();
afterEach(() => spec.verify());
afterAll(async () => {
  await gateway?.stop();
});

test("a streamed continuation compacts with the model itself as summariser and streams a completed response", async () => {
  let previous: string | undefined;
  let compactedStream: { type: string }[] | undefined;
  for (let index = 0; compactedStream === undefined; index++) {
    expect(index, "the history never passed its budget").toBeLessThan(40);
    const before = compactions.length;
    const response = await gateway.post("/v1/responses", {
      model: "tiny-demo",
      stream: true,
      input: `Tell me about step ${index} of the plan.`,
      ...(previous ? { previous_response_id: previous } : {}),
    });
    expect(response.status).toBe(200);
    const { events } = await readSse(response);
    const completed = events.find((event) => (event as { type: string }).type === "response.completed") as { response: { id: string } } | undefined;
    expect(completed, "the stream completed").toBeDefined();
    previous = completed!.response.id;
    if (compactions.length > before) compactedStream = events as { type: string }[];
  }
  expect(compactions[0]).toMatchObject({ summarizer: "tiny-demo", budget: 1200 });
  expect(compactions[0]!.tokens_after as number).toBeLessThanOrEqual(1200);
  expect(compactedStream[0]!.type).toBe("response.created");
  expect(compactedStream.map((event) => event.type)).toContain("response.reasoning_summary_text.delta");
});

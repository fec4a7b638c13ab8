import "reflect-metadata";
import { afterAll, beforeAll, expect, test } from "vitest";
import type { GatewayEvent } from "../../src/foundation/event-bus/event-bus.js";
import { SUMMARY_PREFIX } from "../../src/turn/compaction/view.js";
import { startTestGateway, DEMO_ROUTES, type TestGateway } from "../support/gateway.js";
import { SpecWatch } from "../support/open-responses.js";
import { collectCompactions, respond } from "./support/harness.js";

/** POST /v1/responses/compact compacts a stored chain now, with carrierd's own compaction, and returns the window (a CompactResource). */
let gateway: TestGateway;
let compactions: GatewayEvent[];
const spec = new SpecWatch();

beforeAll(async () => {
  gateway = await startTestGateway({ routes: DEMO_ROUTES, spec });
  compactions = collectCompactions(gateway);
});
afterAll(() => gateway?.stop());

test("a chain is compacted on request: summary in the window, kept turns with their reasoning, and the chain continues under it", async () => {
  let previous: string | undefined;
  for (let index = 0; index < 6; index++) {
    const result = await respond(gateway, {
      model: "demo",
      input: `Tell me about step ${index} of the plan.`,
      ...(previous ? { previous_response_id: previous } : {}),
    });
    expect(result.status).toBe(200);
    previous = result.body.id;
  }
  const response = await gateway.post("/v1/responses/compact", { model: "demo", previous_response_id: previous });
  expect(response.status).toBe(200);
  const body = (await response.json()) as {
    object: string;
    output: { type: string; role?: string; content?: { text: string }[]; summary?: { text: string }[] }[];
  };
  expect(body.object).toBe("response.compaction");
  const summary = body.output.findIndex((item) => item.type === "message" && item.role === "user" && item.content![0]!.text.startsWith(SUMMARY_PREFIX));
  expect(summary, "the summary is in the window").toBeGreaterThan(0);
  expect(body.output.slice(summary + 1).some((item) => item.type === "reasoning" && item.summary![0]!.text.length > 0)).toBe(true);
  expect(compactions).toHaveLength(1);
  expect(compactions[0]).toMatchObject({ response_id: previous, summarizer: "demo" });

  const next = await respond(gateway, { model: "demo", input: "And the last step?", previous_response_id: previous });
  expect(next.status).toBe(200);
  await spec.verify({ expectSome: true });
});

test.each([
  [{ model: "demo" }, "previous_response_id", 400],
  [{ model: "demo", previous_response_id: "resp_none" }, "previous_response_id", 404],
  [{ model: "nope", previous_response_id: "resp_none" }, "model", 404],
  [{ model: "demo", previous_response_id: "resp_none", input: "x" }, "input", 400],
])("bad compact request %j is an OpenAI-shaped error naming %s", async (body, param, status) => {
  const response = await gateway.post("/v1/responses/compact", body);
  expect(response.status).toBe(status);
  expect(((await response.json()) as { error: { param: string } }).error.param).toBe(param);
  await spec.verify();
});

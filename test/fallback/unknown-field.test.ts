import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { EVENT_BUS } from "../../src/foundation/container/tokens.js";
import type { EventBus, GatewayEvent } from "../../src/foundation/event-bus/event-bus.js";
import type { VerdictStorage } from "../../src/storage/storage.js";
import { startTestGateway, storageOf, type TestGateway } from "../support/gateway.js";
import { startOpenAIUpstream, type OpenAIUpstream } from "../support/openai-upstream.js";
import { ask, assistantsOf, carriersOf, type ClientTurn, type Message } from "../support/stateless-client.js";
import { BUILT_IN_STRICT, fallbackRoutes } from "./fallback-routes.js";
import { LOOK_ALIKES, PHRASINGS } from "./phrasings.js";

let upstream: OpenAIUpstream;
let gateway: TestGateway;
const events: GatewayEvent[] = [];
beforeAll(async () => {
  upstream = await startOpenAIUpstream({
    strict: {
      ...PHRASINGS,
      // look-alikes are answered once a request resends history, so turn 1 succeeds and turn 2 meets them
      ...Object.fromEntries(
        Object.entries(LOOK_ALIKES).map(([name, error]) => [`alike${name}`, { fields: ["reasoning_content"], status: error.status, body: () => error.body }]),
      ),
      // a must-echo provider whose complaint names reasoning_content: it is about the value, never a verdict
      echo: {
        fields: ["reasoning_content"],
        status: 400,
        body: (index) =>
          JSON.stringify({ error: { message: `messages[${index}].reasoning_content: unknown field in thinking mode`, type: "invalid_request_error" } }),
      },
      // refuses reasoning_content, then fails again without it
      double: {
        fields: ["reasoning_content"],
        status: 400,
        body: (index) =>
          JSON.stringify({
            error: { message: `Extra inputs are not permitted, field: 'messages[${index}].reasoning_content'`, type: "invalid_request_error" },
          }),
        thenError: { status: 422, body: JSON.stringify({ error: { message: "context window exceeded for this deployment", type: "invalid_request_error" } }) },
      },
    },
  });
  gateway = await startTestGateway({ routes: fallbackRoutes(upstream) });
  gateway.container.resolve<EventBus>(EVENT_BUS).subscribe((event) => events.push(event));
});
afterAll(async () => {
  await gateway.stop();
  await upstream.close();
});

/** Turn 1 (nothing to replay yet), then turn 2 resending it: the first request that carries reasoning. */
async function twoTurns(
  model: string,
  stream: boolean,
  extra: Record<string, unknown> = {},
): Promise<{ first: ClientTurn; second: ClientTurn; requests: number }> {
  const flavor = model.split("/")[0]!;
  const history: Message[] = [{ role: "user", content: `hello ${model} ${Math.random()}` }];
  const first = await ask(gateway, { model, stream, messages: history, ...extra });
  expect(first.status, JSON.stringify(first.error)).toBe(200);
  history.push(first.kept, { role: "user", content: "and then?" });
  const before = upstream.requestsFor(flavor).length;
  const second = await ask(gateway, { model, stream, messages: history, ...extra });
  return { first, second, requests: upstream.requestsFor(flavor).length - before };
}

function verdicts(): VerdictStorage {
  return storageOf(gateway).verdicts;
}

const ALL_REJECTING = {
  ...Object.fromEntries(Object.entries(BUILT_IN_STRICT).map(([name, entry]) => [name, entry.recorded])),
  ...Object.fromEntries(Object.entries(PHRASINGS).map(([name, entry]) => [name, entry.recorded])),
};

describe.each(Object.entries(ALL_REJECTING))("%s", (flavor, recorded) => {
  test("records the verdict, retries exactly once without the field, and never sends it again; siblings unaffected", async () => {
    const stream = flavor.length % 2 === 0; // half the phrasings stream, half do not
    const eventsBefore = events.length;
    const { second, requests } = await twoTurns(`${flavor}/model-a`, stream);
    expect(second.status, JSON.stringify(second.error)).toBe(200);
    expect(requests).toBe(2);
    const [rejected, retried] = upstream.requestsFor(flavor).slice(-2);
    expect(rejected!.status).toBeGreaterThanOrEqual(400);
    expect(retried!.status).toBe(200);
    for (const field of recorded) expect(carriersOf(assistantsOf(retried!.body)[0]!)).not.toContain(field);
    expect(
      (await verdicts().list())
        .filter((verdict) => verdict.provider === flavor && verdict.model === "model-a")
        .map((verdict) => [verdict.host, verdict.field, verdict.status])
        .sort(),
    ).toEqual(recorded.map((field) => ["127.0.0.1", field, rejected!.status]).sort());
    const published = events.slice(eventsBefore).filter((event) => event.type === "verdict.recorded");
    expect(published).toHaveLength(1);
    expect(published[0]).toMatchObject({ provider: flavor, host: "127.0.0.1", model: "model-a", fields: recorded, session_id: second.sessionId });

    // a later conversation: one request, the field omitted from the start
    const later = await twoTurns(`${flavor}/model-a`, !stream);
    expect(later.second.status, JSON.stringify(later.second.error)).toBe(200);
    expect(later.requests).toBe(1);

    // a sibling model on the same host is unaffected: its first replaying request still carries the field
    const sibling = await twoTurns(`${flavor}/model-b`, stream);
    expect(sibling.requests).toBe(2);
    expect(carriersOf(assistantsOf(upstream.requestsFor(flavor).at(-2)!.body)[0]!)).toContain(PHRASINGS[flavor]?.named ?? recorded[0]);
  });
});

describe("no verdict, no retry", () => {
  test.each(Object.keys(LOOK_ALIKES))("look-alike %s: the upstream's error goes to the client as is", async (name) => {
    const flavor = `alike${name}`;
    const error = LOOK_ALIKES[name]!;
    const { second, requests } = await twoTurns(`${flavor}/m`, false, name === "toplevel" ? { reasoning: { effort: "high" } } : {});
    expect(requests).toBe(1);
    expect(second.status).toBe(error.status);
    // carried (docs/api.md#carried-chat-completions): the upstream's body reaches the client as it came, whatever its shape
    const sent = JSON.parse(error.body) as { error?: unknown } | [{ error?: unknown }];
    expect(second.error).toEqual(Array.isArray(sent) ? sent[0].error : sent.error);
    expect((await verdicts().list()).filter((verdict) => verdict.provider === flavor)).toEqual([]);
  });

  test.each([false, true])("stream=%s: on a must-echo route a complaint about reasoning_content is passed through, never recorded", async (stream) => {
    const { second, requests } = await twoTurns("echo/deepseek-like", stream);
    expect(requests).toBe(1);
    expect(second.status).toBe(400);
    expect(second.error!.message).toMatch(/^messages\[\d+\]\.reasoning_content: unknown field in thinking mode$/);
    expect((await verdicts().list()).filter((verdict) => verdict.provider === "echo")).toEqual([]);
  });

  test.each([false, true])("stream=%s: a second rejection goes to the client with the upstream's status and message; one retry only", async (stream) => {
    const { second, requests } = await twoTurns(`double/m-${stream}`, stream);
    expect(requests).toBe(2);
    expect(second.status).toBe(422);
    expect(second.error!.message).toBe("context window exceeded for this deployment");
    // the retry was not served: no verdict, so the next request meets the same rejection
    expect((await verdicts().list()).filter((verdict) => verdict.provider === "double")).toEqual([]);
  });
});

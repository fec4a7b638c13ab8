import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startTestGateway, storageOf, type TestGateway } from "../support/gateway.js";
import { startOpenAIUpstream, type OpenAIUpstream } from "../support/openai-upstream.js";
import { startPgCluster } from "../support/pg-cluster.js";
import { announceSkipped, pgSkipReason } from "../support/postgres.js";
import { ask, assistantsOf, carriersOf, type Message } from "../support/stateless-client.js";

/**
 * The verdict table is bounded by what the upstream serves: through a glob
 * route a key can name any model, and an upstream that checks message fields
 * before model names refuses the field for every made-up name. A verdict is
 * recorded only once the retry without the field was served, so made-up names
 * leave none, and a real model still gets its verdict.
 */

const SERVED = "qwen3-32b";
const MADE_UP = 300;

let upstream: OpenAIUpstream;
beforeAll(async () => {
  upstream = await startOpenAIUpstream({
    strict: {
      // Groq's phrasings: the assistant field first, whatever the model; then the model name
      picky: {
        fields: ["reasoning_content"],
        status: 400,
        body: (index, field) =>
          JSON.stringify({
            error: {
              message: `'messages.${index}' : for 'role:assistant' the following must be satisfied[('messages.${index}' : property '${field}' is unsupported)]`,
              type: "invalid_request_error",
            },
          }),
        serves: [SERVED],
      },
    },
  });
});
afterAll(() => upstream.close());

function routes(): string {
  return `version: 1
providers:
  picky: { plugin: openai-compatible, base_url: "${upstream.baseUrl("picky")}" }
models:
  - { name: "picky/*", provider: picky }
carriers:
  - match: {}
    fields: [reasoning_content]
`;
}

/** A history whose assistant message carries reasoning_content, as a client may send it. */
function carrying(n: number): Message[] {
  return [
    { role: "user", content: `question ${n}` },
    { role: "assistant", content: `answer ${n}`, reasoning_content: `thought ${n}` },
    { role: "user", content: "and then?" },
  ];
}

function suite(backend: string, start: () => Promise<{ gateway: TestGateway; stop: () => Promise<void> }>): void {
  let gateway: TestGateway;
  let stop: () => Promise<void>;
  beforeAll(async () => {
    ({ gateway, stop } = await start());
  });
  afterAll(() => stop?.());

  test(`${backend}: ${MADE_UP} made-up model names refused for the field leave no verdict; the served model still gets its verdict and its retry`, async () => {
    for (let n = 0; n < MADE_UP; n++) {
      const before = upstream.requestsFor("picky").length;
      const answer = await ask(gateway, { model: `picky/made-up-${n}`, messages: carrying(n) });
      // refused for the field, retried without it, and the retry's 404 reaches the client
      expect(answer.status).toBe(404);
      expect(answer.error!.message).toBe(`The model \`made-up-${n}\` does not exist or you do not have access to it.`);
      const [rejected, retried] = upstream.requestsFor("picky").slice(before);
      expect([rejected!.status, retried!.status]).toEqual([400, 404]);
      expect(carriersOf(assistantsOf(retried!.body)[0]!)).not.toContain("reasoning_content");
    }
    expect(await storageOf(gateway).verdicts.list()).toEqual([]);
    // nor an empty session to keep the verdict's copy in
    expect(await storageOf(gateway).sessions.list({ limit: 1000 })).toEqual([]);

    // the model the upstream serves: refused, retried without the field, served, and the verdict recorded
    const before = upstream.requestsFor("picky").length;
    const served = await ask(gateway, { model: `picky/${SERVED}`, messages: carrying(-1) });
    expect(served.status, JSON.stringify(served.error)).toBe(200);
    expect(
      upstream
        .requestsFor("picky")
        .slice(before)
        .map((request) => request.status),
    ).toEqual([400, 200]);
    expect((await storageOf(gateway).verdicts.list()).map(({ provider, host, model, field }) => ({ provider, host, model, field }))).toEqual([
      { provider: "picky", host: "127.0.0.1", model: SERVED, field: "reasoning_content" },
    ]);

    // in force from the next request: one upstream call, the field left out
    const next = upstream.requestsFor("picky").length;
    expect((await ask(gateway, { model: `picky/${SERVED}`, messages: carrying(-2) })).status).toBe(200);
    const calls = upstream.requestsFor("picky").slice(next);
    expect(calls.map((request) => request.status)).toEqual([200]);
    expect(carriersOf(assistantsOf(calls[0]!.body)[0]!)).not.toContain("reasoning_content");
  });
}

describe("SQLite", () =>
  suite("SQLite", async () => {
    const gateway = await startTestGateway({ routes: routes() });
    return { gateway, stop: () => gateway.stop() };
  }));

announceSkipped("test/fallback/verdict-bound.test.ts", 1);
describe.skipIf(pgSkipReason() !== undefined)("PostgreSQL", () =>
  suite("PostgreSQL", async () => {
    const cluster = await startPgCluster(1, { routes: routes() });
    return { gateway: cluster.gateways[0]!, stop: () => cluster.stop() };
  }),
);

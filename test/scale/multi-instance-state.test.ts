import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { fingerprintOf } from "../../src/conversation/fingerprint.js";
import { openPostgresStorage } from "../../src/storage/postgres/postgres-storage.js";
import type { NewTurn } from "../../src/storage/turns.js";
import { carrierd, cleanEnv } from "../foundation/cli-process.js";
import { familyRoutes } from "../support/family-routes.js";
import { startOpenAIUpstream, type OpenAIUpstream } from "../support/openai-upstream.js";
import { startPgCluster, type PgCluster } from "../support/pg-cluster.js";
import { announceSkipped, pgSkipReason } from "../support/postgres.js";
import { ask, assistantsOf, carriersOf, type Message } from "../support/stateless-client.js";

/**
 * What one instance writes, every other reads on its next request, with no
 * retry window: stored responses and conversations, a removed session, a
 * verdict. And the race the issue names: a write on A read on B at once,
 * a thousand times.
 */
announceSkipped("test/scale/multi-instance-state.test.ts", 6);
describe.skipIf(pgSkipReason() !== undefined)("state shared by three gateways on one PostgreSQL", () => {
  let upstream: OpenAIUpstream;
  let cluster: PgCluster;
  beforeAll(async () => {
    upstream = await startOpenAIUpstream();
    // groq refuses reasoning_content: the route sends it, so the first turn 2 to groq records a verdict
    cluster = await startPgCluster(3, { routes: familyRoutes(upstream, "  - match: { provider: groq }\n    fields: [reasoning_content]\n") });
  });
  afterAll(async () => {
    await cluster?.stop();
    await upstream?.close();
  });
  const [a, b, c] = [0, 1, 2].map((index) => () => cluster.gateways[index]!);

  test("a previous_response_id created on A is retrieved and continued on B at once, its reasoning upstream", async () => {
    const first = await a().post("/v1/responses", { model: "deepseek/deepseek-reasoner", input: "How many r's in strawberry?" });
    expect(first.status).toBe(200);
    const created = (await first.json()) as { id: string; output: { type: string; summary?: { text: string }[] }[] };
    expect((await b().fetch(`/v1/responses/${created.id}`)).status).toBe(200);
    const second = await b().post("/v1/responses", { model: "deepseek/deepseek-reasoner", input: "And raspberry?", previous_response_id: created.id });
    expect(second.status).toBe(200);
    const sent = upstream.requestsFor("deepseek").at(-1)!.body.messages;
    expect(sent.map((message) => message.role)).toEqual(["user", "assistant", "user"]);
    expect(sent[1]!.reasoning_content).toBe(created.output.find((item) => item.type === "reasoning")!.summary![0]!.text);
  });

  test("a conversation started on A continues on B, then on C, each with the whole history", async () => {
    const conversation = `conv_scale_${Date.now()}`;
    expect((await a().post("/v1/responses", { model: "deepseek/deepseek-reasoner", conversation, input: "One?" })).status).toBe(200);
    expect((await b().post("/v1/responses", { model: "deepseek/deepseek-reasoner", conversation, input: "Two?", stream: true })).status).toBe(200);
    const third = await c().post("/v1/responses", { model: "deepseek/deepseek-reasoner", conversation: { id: conversation }, input: "Three?" });
    expect(third.status).toBe(200);
    const sent = upstream.requestsFor("deepseek").at(-1)!.body.messages;
    expect(sent.map((message) => message.role)).toEqual(["user", "assistant", "user", "assistant", "user"]);
    expect(assistantsOf({ messages: sent }).map(carriersOf)).toEqual([["reasoning_content"], ["reasoning_content"]]);
  });

  test("`carrierd sessions rm` against the store is in force on every instance for the next request", async () => {
    const history: Message[] = [{ role: "user", content: "Remember this, please." }];
    const first = await ask(a(), { model: "openrouter/anthropic/claude-sonnet-4", messages: history });
    expect(first.status).toBe(200);
    history.push(first.kept, { role: "user", content: "What did I say?" });
    // the real CLI in its own process, pointed at the same store
    const home = mkdtempSync(join(tmpdir(), "carrierd-scale-cli-"));
    try {
      const removed = await carrierd(["sessions", "rm", first.sessionId!, "--home", home], { env: cleanEnv({ CARRIERD_STORE: cluster.store.url }) });
      expect(removed, removed.stderr).toMatchObject({ code: 0, stdout: `removed ${first.sessionId}\n` });
      const listed = await carrierd(["sessions", "list", "--store", cluster.store.url, "--home", home]);
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.stdout).not.toContain(first.sessionId!);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
    for (const gateway of [b(), c()]) {
      const next = await ask(gateway, { model: "openrouter/anthropic/claude-sonnet-4", messages: history });
      expect(next.status).toBe(200);
      expect(next.sessionId).not.toBe(first.sessionId);
      expect(carriersOf(assistantsOf(upstream.requestsFor("openrouter").at(-1)!.body)[0]!)).toEqual([]);
    }
  });

  test("a verdict recorded on A is in force on B's and C's next request: one rejected request in all", async () => {
    const model = "groq/openai/gpt-oss-120b";
    const rejected = () => upstream.requestsFor("groq").filter((request) => request.status === 400).length;
    for (const [index, gateway] of [a(), b(), c()].entries()) {
      const history: Message[] = [{ role: "user", content: `Verdict conversation ${index}.` }];
      history.push((await ask(gateway, { model, messages: history })).kept, { role: "user", content: "More." });
      expect((await ask(gateway, { model, messages: history })).status).toBe(200);
      expect(rejected()).toBe(1); // A's turn 2 was refused and retried without the field; B and C never sent it
    }
    const sent = assistantsOf(upstream.requestsFor("groq").at(-1)!.body);
    expect(carriersOf(sent[0]!)).not.toContain("reasoning_content");
  });

  test("/health says the shared store answers; /v1/capabilities names it, password redacted", async () => {
    const health = await fetch(`${b().url}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: "ok", store: "ok" });
    const capabilities = (await (await b().fetch("/v1/capabilities")).json()) as { store: unknown };
    expect(capabilities.store).toEqual({ backend: "postgres", url: cluster.store.url });
  });

  test("a turn written on one storage is matched and replayed by another at once (separate reads and the one-statement lookup), 1,000 times", async () => {
    const writer = await openPostgresStorage({ url: cluster.store.url, poolSize: 1 });
    const reader = await openPostgresStorage({ url: cluster.store.url, poolSize: 1 });
    try {
      let stale = 0;
      for (let index = 0; index < 1000; index++) {
        const turn = raceTurn(index);
        await writer.turns.save(turn);
        const sources = await reader.turns.replaySources(new Map([[0, turn.id]]));
        // the request path's one-statement read: its matches and carriers are as fresh as the separate read
        const read = await reader.turns.lookup({
          keyHash: turn.keyHash,
          keys: [turn.fingerprint],
          provider: "p",
          host: "h",
          model: "m",
          explicit: undefined,
          withCarriers: true,
        });
        if (sources.get(0)?.reasoningText !== turn.reasoningText) stale++;
        if (read.matches.get(turn.fingerprint)?.[0]?.id !== turn.id || read.sources.get(turn.id)?.reasoningText !== turn.reasoningText) stale++;
      }
      expect(stale).toBe(0);
    } finally {
      await writer.close();
      await reader.close();
    }
  });
});

function raceTurn(index: number): NewTurn {
  const content = `race answer ${index}`;
  return {
    id: `turn_race_${index}_${Date.now()}`,
    sessionId: "sess_race",
    keyHash: "race-key",
    parentTurnId: undefined,
    model: "m",
    plugin: "openai-compatible",
    provider: "p",
    host: "h",
    upstreamModel: "m",
    prompt: [{ role: "user", content: `q ${index}` }],
    content,
    toolCalls: [],
    reasoningText: `reasoning ${index}`,
    reasoningDetails: undefined,
    nativeRecord: undefined,
    usage: undefined,
    finishReason: "stop",
    upstreamId: undefined,
    // the same text every time: each new turn must be the newest match at once, never the one before it
    fingerprint: fingerprintOf("race answer", []),
  };
}

import "reflect-metadata";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { placeByDepth } from "../../src/turn/sessions/depth-placement.js";
import type { DepthMatch, FingerprintMatch } from "../../src/storage/turns.js";
import { familyRoutes } from "../support/family-routes.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { startOpenAIUpstream, type OpenAIUpstream } from "../support/openai-upstream.js";
import { startPgCluster } from "../support/pg-cluster.js";
import { announceSkipped, pgSkipReason } from "../support/postgres.js";

announceSkipped("test/replay/position-poisoning.test.ts", 1);

/**
 * Position matching cannot be poisoned (docs/sessions-and-replay.md,
 * "Position matching"): two clients of one key share an X-Session-Id, and
 * what one stores at the session's next position takes no place of the
 * other's conversation. Each client, re-rendering every answer it resends
 * (no fingerprint finds them), gets back its own reasoning for each turn.
 */
const MODEL = "zai/glm-4.6";
type Message = { role: string; content: string };

const BACKENDS: Record<string, (routes: string) => Promise<{ gateway: TestGateway; stop: () => Promise<void> }>> = {
  sqlite: async (routes) => {
    const gateway = await startTestGateway({ routes });
    return { gateway, stop: () => gateway.stop() };
  },
  postgres: async (routes) => {
    const cluster = await startPgCluster(1, { routes });
    return { gateway: cluster.gateways[0]!, stop: () => cluster.stop() };
  },
};

describe.each(Object.keys(BACKENDS))("position matching in a session two clients share: %s", (backendName) => {
  const skip = backendName === "postgres" && pgSkipReason() !== undefined;
  let upstream: OpenAIUpstream;
  let backend: { gateway: TestGateway; stop: () => Promise<void> };
  beforeAll(async () => {
    if (skip) return;
    upstream = await startOpenAIUpstream();
    backend = await BACKENDS[backendName]!(familyRoutes(upstream));
  });
  afterAll(async () => {
    await backend?.stop();
    await upstream?.close();
  });

  /** One client of the shared session: its history as it resends it (answers re-rendered), and the reasoning each answer came with. */
  function client(name: string) {
    const history: Message[] = [];
    const reasoning: string[] = [];
    return {
      reasoning,
      async turn(): Promise<(string | null)[]> {
        history.push({ role: "user", content: `${name}, question ${reasoning.length + 1}` });
        const response = await backend.gateway.post("/v1/chat/completions", { model: MODEL, messages: history }, { "x-session-id": "one-for-all" });
        expect(response.status).toBe(200);
        const message = ((await response.json()) as { choices: { message: { content: string; reasoning_content: string } }[] }).choices[0]!.message;
        const sent = upstream.requestsFor("zai").at(-1)!.body.messages;
        reasoning.push(message.reasoning_content);
        history.push({ role: "assistant", content: `> ${message.content}` });
        return sent.filter((entry) => entry.role === "assistant").map((entry) => (entry.reasoning_content as string | undefined) ?? null);
      },
    };
  }

  test.skipIf(skip)("turns interleaved at the session's positions: each client's re-rendered turns get their own reasoning back", async () => {
    const first = client("first");
    const second = client("second");
    expect(await first.turn()).toEqual([]);
    expect(await second.turn()).toEqual([]); // position 2: depth 1 of the second conversation
    expect(await first.turn()).toEqual([first.reasoning[0]]);
    expect(await second.turn()).toEqual([second.reasoning[0]]);
    expect(await second.turn()).toEqual([second.reasoning[0], second.reasoning[1]]);
    // the first client's turns 1, 2 and 3 sit at positions 1, 3 and 6
    expect(await first.turn()).toEqual([first.reasoning[0], first.reasoning[1]]);
    expect(await first.turn()).toEqual(first.reasoning.slice(0, 3));
    expect(await second.turn()).toEqual(second.reasoning.slice(0, 3));
  });
});

describe("placeByDepth", () => {
  const turn = (id: string, parent: string | null, samePrompt = false): DepthMatch => ({ id, session_id: "s", parent_turn_id: parent, samePrompt });
  const ids = (turns: readonly (FingerprintMatch | undefined)[]) => turns.map((placed) => placed?.id ?? null);

  test("a depth another conversation shares is decided by the links of the turns placed around it", () => {
    // conversation t: t1 → t2 → t3; conversation u: u1 → u2, stored later (newest first at each depth)
    const atDepth = new Map([
      [1, [turn("u1", null), turn("t1", null)]],
      [2, [turn("u2", "u1"), turn("t2", "t1")]],
    ]);
    // message 3 placed by its fingerprint as t3: its parent places message 2, whose parent places message 1
    expect(ids(placeByDepth([undefined, undefined, turn("t3", "t2")], atDepth).turns)).toEqual(["t1", "t2", "t3"]);
    // message 1 placed by fingerprint as t1: message 2 is its child
    expect(ids(placeByDepth([turn("t1", null), undefined], atDepth).turns)).toEqual(["t1", "t2"]);
    // nothing placed, every depth shared: the newest conversation, followed by its links
    expect(ids(placeByDepth([undefined, undefined], atDepth).turns)).toEqual(["u1", "u2"]);
  });

  test("without links, the candidate asked for by the same messages wins over a newer one", () => {
    const atDepth = new Map([
      [1, [turn("u1", null), turn("t1", null, true)]],
      [2, [turn("u2", "u1"), turn("t2", "t1")]],
    ]);
    expect(ids(placeByDepth([undefined, undefined], atDepth).turns)).toEqual(["t1", "t2"]);
  });

  test("a lone candidate is taken, and places its neighbours by their links; a turn is placed once", () => {
    const atDepth = new Map([
      [1, [turn("u1", null), turn("t1", null)]],
      [2, [turn("t2", "t1")]],
    ]);
    const placed = placeByDepth([undefined, undefined], atDepth);
    expect(ids(placed.turns)).toEqual(["t1", "t2"]);
    expect([...placed.byDepth].sort()).toEqual([0, 1]);
    expect(ids(placeByDepth([turn("t1", null), undefined], new Map([[2, [turn("t1", null)]]])).turns)).toEqual(["t1", null]);
  });
});

import { afterEach, describe, expect, test } from "vitest";
import { WEATHER_TOOL, familyRoutes } from "../support/family-routes.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { startOpenAIUpstream } from "../support/openai-upstream.js";
import { startPgCluster, type PgCluster } from "../support/pg-cluster.js";
import { announceSkipped, pgSkipReason } from "../support/postgres.js";
import { ask, assistantsOf, carriersOf, type Message } from "../support/stateless-client.js";
import { startAnthropicEmulator } from "../plugins/emulators/anthropic-emulator.js";
import { startGeminiEmulator } from "../plugins/emulators/gemini-emulator.js";

/**
 * Three gateways on one PostgreSQL store, a stateless client whose turns
 * rotate across them (turn 1 on A, 2 on B, 3 on C), against the same
 * conversation on one gateway alone with the default store (SQLite). Every upstream request of the rotated
 * run must be byte for byte the request the single instance sent: the
 * carriers of the turns another instance stored, signed thinking blocks and
 * Gemini thought signatures included (the emulators verify them and refuse
 * a request that lacks or altered one).
 */

/** A provider family: its emulator, its routes, and the requests it received. */
interface Family {
  readonly model: string;
  readonly env?: Record<string, string>;
  start(): Promise<{ routes: string; bodies: () => unknown[]; close: () => Promise<void> }>;
}

const FAMILIES: Record<string, Family> = {
  // must_echo: the emulator answers 400 to a tool turn without its reasoning_content
  "deepseek (must_echo)": { model: "deepseek/deepseek-reasoner", start: openAICompatible("deepseek") },
  "kimi (must_echo)": { model: "kimi/kimi-k2-thinking", start: openAICompatible("kimi") },
  // reasoning_details: signed text and encrypted blocks, verbatim
  "openrouter (signed details)": { model: "openrouter/anthropic/claude-sonnet-4", start: openAICompatible("openrouter") },
  // strict: fields [] and an upstream whose schema refuses any carrier
  "mistral (strict)": { model: "mistral/magistral-medium", start: openAICompatible("mistral") },
  "anthropic (signed thinking)": {
    model: "claude",
    env: { ANTHROPIC_API_KEY: "sk-ant-test" },
    start: async () => {
      const anthropic = await startAnthropicEmulator({ apiKey: "sk-ant-test", redacted: true });
      return {
        routes: `version: 1
providers:
  anthropic: { plugin: anthropic, base_url: ${anthropic.url}, api_key_env: ANTHROPIC_API_KEY }
models:
  - { name: claude, provider: anthropic, model: claude-sonnet-4-20250514, params: { thinking: { type: enabled, budget_tokens: 4000 } } }
carriers:
  - match: {}
    fields: [reasoning_content]
`,
        bodies: () => anthropic.received.map((request) => request.body),
        close: () => anthropic.close(),
      };
    },
  },
  "gemini (thought signatures)": {
    model: "g",
    env: { GEMINI_API_KEY: "gemini-test-key" },
    start: async () => {
      const gemini = await startGeminiEmulator({ apiKey: "gemini-test-key" });
      return {
        routes: `version: 1
providers:
  gemini: { plugin: gemini, base_url: ${gemini.url}, api_key_env: GEMINI_API_KEY }
models:
  - { name: g, provider: gemini, model: gemini-3-pro-preview }
carriers:
  - match: {}
    fields: [reasoning_content]
`,
        bodies: () => gemini.received.map((request) => request.body),
        close: () => gemini.close(),
      };
    },
  },
};

function openAICompatible(flavor: string): Family["start"] {
  return async () => {
    const upstream = await startOpenAIUpstream();
    return { routes: familyRoutes(upstream), bodies: () => upstream.requestsFor(flavor).map((request) => request.body), close: () => upstream.close() };
  };
}

/**
 * A tool call, its result, the answer, a follow-up: three turns, each a
 * stateless resend of the whole history without any reasoning, each on the
 * gateway `on` picks for it.
 */
async function threeTurns(on: (turn: number) => TestGateway, model: string, stream: boolean): Promise<void> {
  const tools = [WEATHER_TOOL];
  const history: Message[] = [{ role: "user", content: "What is the weather in Florence?" }];
  const first = await ask(on(0), { model, stream, tools, messages: history });
  expect(first.status, JSON.stringify(first.error)).toBe(200);
  const calls = (first.kept.tool_calls as { id: string }[] | undefined) ?? [];
  history.push(
    first.kept,
    ...(calls.length > 0 ? calls.map((call) => ({ role: "tool", tool_call_id: call.id, content: "20 C" })) : [{ role: "user", content: "And then?" }]),
  );
  const second = await ask(on(1), { model, stream, tools, messages: history });
  expect(second.status, JSON.stringify(second.error)).toBe(200);
  history.push(second.kept, { role: "user", content: "Thanks! And tomorrow?" });
  const third = await ask(on(2), { model, stream, tools, messages: history });
  expect(third.status, JSON.stringify(third.error)).toBe(200);
}

announceSkipped("test/scale/multi-instance-replay.test.ts", Object.keys(FAMILIES).length * 2);
describe.skipIf(pgSkipReason() !== undefined)("turns rotating across three gateways on one PostgreSQL", () => {
  const stops: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  });

  /** The conversation on one gateway with today's default store (SQLite), or rotated across a PostgreSQL cluster. */
  async function run(family: Family, where: "single sqlite" | "three on postgres", stream: boolean): Promise<unknown[]> {
    const upstream = await family.start();
    stops.push(upstream.close);
    if (where === "single sqlite") {
      const gateway = await startTestGateway({ routes: upstream.routes, env: family.env });
      stops.push(() => gateway.stop());
      await threeTurns(() => gateway, family.model, stream);
    } else {
      const cluster: PgCluster = await startPgCluster(3, { routes: upstream.routes, env: family.env });
      stops.push(() => cluster.stop());
      await threeTurns((turn) => cluster.at(turn), family.model, stream);
    }
    return upstream.bodies();
  }

  describe.each(Object.entries(FAMILIES))("%s", (_name, family) => {
    test.each([false, true])("stream=%s: every upstream request is the one a single instance sends", async (stream) => {
      const single = await run(family, "single sqlite", stream);
      const rotated = await run(family, "three on postgres", stream);
      expect(single.length).toBeGreaterThanOrEqual(3);
      expect(renamed(rotated, single)).toEqual(single);
    });
  });

  test("the comparison has teeth: the rotated run's turn 2 carries the reasoning turn 1 produced on another instance", async () => {
    const upstream = await startOpenAIUpstream();
    stops.push(() => upstream.close());
    const cluster = await startPgCluster(3, { routes: familyRoutes(upstream) });
    stops.push(() => cluster.stop());
    await threeTurns((turn) => cluster.at(turn), "openrouter/anthropic/claude-sonnet-4", false);
    const [turnTwo, turnThree] = upstream
      .requestsFor("openrouter")
      .slice(1)
      .map((request) => assistantsOf(request.body));
    const all = ["reasoning_content", "reasoning", "reasoning_details"];
    expect(carriersOf(turnTwo![0]!)).toEqual(all);
    expect(turnThree!.map(carriersOf)).toEqual([all, all]);
    const details = turnTwo![0]!.reasoning_details as { signature?: string }[];
    expect(details[0]!.signature).toMatch(/^sig-openrouter-1-/);
  });
});

/**
 * `rotated` with the values the emulators make up at random per run (tool
 * ids, redacted-thinking blobs; each signed by the emulator, which refuses
 * them altered) renamed to the single run's. A renaming must be one to one
 * across the whole run: the same value everywhere it is sent, and no two
 * values of one run for one of the other. Everything else must already be
 * equal, which the caller's toEqual checks.
 */
function renamed(rotated: unknown, single: unknown): unknown {
  const forward = new Map<string, string>();
  const backward = new Map<string, string>();
  const walk = (from: unknown, to: unknown): unknown => {
    if (typeof from === "string" && typeof to === "string" && from !== to) {
      const known = forward.get(from);
      if (known === undefined && !backward.has(to)) {
        forward.set(from, to);
        backward.set(to, from);
        return to;
      }
      return known ?? from; // inconsistent: left as it was, so toEqual shows it
    }
    if (Array.isArray(from) && Array.isArray(to)) return from.map((item, index) => walk(item, to[index]));
    if (from && to && typeof from === "object" && typeof to === "object") {
      return Object.fromEntries(Object.entries(from).map(([key, value]) => [key, walk(value, (to as Record<string, unknown>)[key])]));
    }
    return from;
  };
  return walk(rotated, single);
}

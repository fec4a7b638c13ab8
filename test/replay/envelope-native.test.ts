import { afterEach, describe, expect, test } from "vitest";
import { CODEX_PREAMBLE, codexTurn, kept, toolOutputs, userMessage, type Item } from "../support/codex-client.js";
import { startTestGateway, storageOf, type TestGateway } from "../support/gateway.js";
import { startAnthropicEmulator } from "../plugins/emulators/anthropic-emulator.js";
import { SKIP, startGeminiEmulator } from "../plugins/emulators/gemini-emulator.js";
import type { Emulator } from "../plugins/emulators/http-emulator.js";

/**
 * Carriers that live only in the plugin's native record — Anthropic's signed
 * (and redacted) thinking blocks, Gemini's thought signatures — through an
 * envelope: a Codex-shaped client, its session removed before every
 * request, and emulators that refuse a tool-call turn whose signed thinking
 * is missing or altered. Only the envelope can bring them back.
 */

interface Family {
  readonly model: string;
  readonly env: Record<string, string>;
  /** What the second request shows when the native record did not come back. */
  readonly without: "refused" | "signature skipped";
  start(): Promise<{ emulator: Emulator; routes: string }>;
}

const FAMILIES: Record<string, Family> = {
  "anthropic (signed and redacted thinking)": {
    model: "claude",
    env: { ANTHROPIC_API_KEY: "sk-ant-test" },
    without: "refused",
    start: async () => {
      const emulator = await startAnthropicEmulator({ apiKey: "sk-ant-test", redacted: true });
      return {
        emulator,
        routes: `version: 1
providers:
  anthropic: { plugin: anthropic, base_url: ${emulator.url}, api_key_env: ANTHROPIC_API_KEY }
models:
  - { name: claude, provider: anthropic, model: claude-sonnet-4-20250514, params: { thinking: { type: enabled, budget_tokens: 4000 } } }
carriers:
  - match: {}
    fields: [reasoning_content]
`,
      };
    },
  },
  "gemini (thought signatures)": {
    model: "g",
    env: { GEMINI_API_KEY: "gemini-test-key" },
    // carrierd stands in Gemini's documented placeholder for a signature it does not have
    without: "signature skipped",
    start: async () => {
      const emulator = await startGeminiEmulator({ apiKey: "gemini-test-key" });
      return {
        emulator,
        routes: `version: 1
providers:
  gemini: { plugin: gemini, base_url: ${emulator.url}, api_key_env: GEMINI_API_KEY }
models:
  - { name: g, provider: gemini, model: gemini-3-pro-preview }
carriers:
  - match: {}
    fields: [reasoning_content]
`,
      };
    },
  },
};

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

/** A tool call, its output, the answer; the session removed before each later request; reasoning resent without summary, envelope as given or dropped. */
async function loop(family: Family, stream: boolean, envelopes: "kept" | "dropped"): Promise<{ statuses: number[]; emulator: Emulator }> {
  const { emulator, routes } = await family.start();
  stops.push(() => emulator.close());
  const gateway: TestGateway = await startTestGateway({ routes, env: family.env });
  stops.push(() => gateway.stop());
  const input: Item[] = [...CODEX_PREAMBLE, userMessage("What is the weather in Florence?")];
  const statuses: number[] = [];
  for (let turn = 0; turn < 2; turn++) {
    const answered = await codexTurn(gateway, family.model, input, stream);
    statuses.push(answered.status);
    if (answered.status !== 200) break;
    await storageOf(gateway).sessions.remove(answered.sessionId!);
    const items = kept(answered.done, "without summary").map((item) =>
      item.type === "reasoning" && envelopes === "dropped" ? { ...item, encrypted_content: null } : item,
    );
    input.push(...items, ...toolOutputs(answered.done));
  }
  return { statuses, emulator };
}

describe.each(Object.entries(FAMILIES))("%s", (_name, family) => {
  test.each([false, true])("stream=%s: with the envelope, the tool loop is accepted on the first try after sessions rm", async (stream) => {
    const { statuses, emulator } = await loop(family, stream, "kept");
    expect(statuses).toEqual([200, 200]);
    expect(emulator.received.map((request) => request.status)).toEqual([200, 200]);
    expect(emulator.received[1]!.raw.toString()).not.toContain(SKIP);
  });

  test("the control: without it, the second request lacks the signed reasoning", async () => {
    const { statuses, emulator } = await loop(family, false, "dropped");
    if (family.without === "refused") {
      expect(statuses).toEqual([200, 400]);
    } else {
      expect(statuses).toEqual([200, 200]);
      expect(emulator.received[1]!.raw.toString()).toContain(SKIP);
    }
  });
});

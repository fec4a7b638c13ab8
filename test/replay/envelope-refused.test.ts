import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { Envelopes } from "../../src/routing/carriers/envelope.js";
import { EnvelopeKeyRing } from "../../src/routing/carriers/envelope-keys.js";
import { keyScope } from "../../src/turn/sessions/key-scope.js";
import { captureLog, type CapturedLog } from "../support/captured-log.js";
import { CODEX_PREAMBLE, codexTurn, kept, toolOutputs, userMessage, type CodexTurn, type Item } from "../support/codex-client.js";
import { familyRoutes } from "../support/family-routes.js";
import { startTestGateway, storageOf, TEST_KEY, type TestGateway } from "../support/gateway.js";
import { startOpenAIUpstream, type OpenAIUpstream } from "../support/openai-upstream.js";

/**
 * Envelopes that must not open: altered, sealed for another access key,
 * sealed by another deployment (another store, so another key), expired,
 * or not an envelope at all. Each is ignored: the request is answered, the
 * turn's carriers come from the store as without an envelope, and a debug
 * line says why. A must-echo upstream shows which reasoning went up.
 */

const DEEPSEEK = "deepseek/deepseek-reasoner";
const OWNER_SCOPE = keyScope(TEST_KEY);

let emulator: OpenAIUpstream;
let carrierd: TestGateway;
let elsewhere: TestGateway;
let log: CapturedLog;
const question = [...CODEX_PREAMBLE, userMessage("What is the weather in Florence?")];

beforeAll(async () => {
  emulator = await startOpenAIUpstream();
  log = captureLog();
  carrierd = await startTestGateway({ routes: familyRoutes(emulator), log: log.logger });
  elsewhere = await startTestGateway({ routes: familyRoutes(emulator) });
});

afterAll(async () => {
  await carrierd?.stop();
  await elsewhere?.stop();
  await emulator?.close();
});

beforeEach(() => {
  log.lines.length = 0;
});

/** Turn 1 on `on`, then turn 2 on carrierd with its reasoning item's envelope replaced by `envelope(first)`. */
async function resentWith(
  envelope: (first: CodexTurn) => Promise<unknown> | unknown,
  options: { on?: TestGateway; removeSession?: boolean } = {},
): Promise<{ first: CodexTurn; second: CodexTurn }> {
  const first = await codexTurn(options.on ?? carrierd, DEEPSEEK, question, false);
  expect(first.status).toBe(200);
  if (options.removeSession) await storageOf(options.on ?? carrierd).sessions.remove(first.sessionId!);
  const replaced = await envelope(first);
  const items = kept(first.done, "without summary").map((item): Item => (item.type === "reasoning" ? { ...item, encrypted_content: replaced as never } : item));
  const second = await codexTurn(carrierd, DEEPSEEK, [...question, ...items, ...toolOutputs(first.done)], false);
  return { first, second };
}

function envelopeOf(turn: CodexTurn): string {
  return String(turn.done.find((item) => item.type === "reasoning")!.encrypted_content);
}

function ignoredBecause(): unknown[] {
  return log.lines.filter((line) => line.level === "debug" && line.message.startsWith("encrypted_content ignored")).map((line) => line.object.reason);
}

/** The last upstream request was accepted at once: its reasoning came from the stored turn. */
function lastAccepted(): void {
  expect(emulator.requestsFor("deepseek").at(-1)!.status).toBe(200);
}

/** A different character at `at`, still base64url: the envelope no longer authenticates. */
function altered(envelope: string, at: number): string {
  const char = envelope[at] === "A" ? "B" : "A";
  return envelope.slice(0, at) + char + envelope.slice(at + 1);
}

describe("an envelope that does not open falls back to the stored turn, with a debug line, never a 500", () => {
  test.each([
    ["its ciphertext", (envelope: string) => altered(envelope, 40)],
    ["its tag", (envelope: string) => altered(envelope, envelope.length - 3)],
    ["its nonce", (envelope: string) => altered(envelope, 4 + 14)],
  ])("altered in %s", async (_part, alter) => {
    const { second } = await resentWith((first) => alter(envelopeOf(first)));
    expect(second.status).toBe(200);
    lastAccepted();
    expect(ignoredBecause()).toEqual(["forged or not this key's"]);
  });

  test("its key id altered: no key of this deployment has it", async () => {
    const { second } = await resentWith((first) => altered(envelopeOf(first), 5));
    expect(second.status).toBe(200);
    lastAccepted();
    expect(ignoredBecause()).toEqual(["unknown key"]);
  });

  test("sealed for another access key", async () => {
    const { second } = await resentWith(async (first) => {
      const envelopes = new Envelopes(new EnvelopeKeyRing(storageOf(carrierd).envelopeKeys));
      const carriers = await envelopes.open(envelopeOf(first), OWNER_SCOPE);
      expect(carriers?.reasoningText).toMatch(/^Step \d+: the deepseek model thinks/);
      return envelopes.seal(carriers!, keyScope("another-key-0123456789"));
    });
    expect(second.status).toBe(200);
    lastAccepted();
    expect(ignoredBecause()).toEqual(["forged or not this key's"]);
  });

  test("sealed by another deployment (another store): its key is not one of ours, and the stored turn is not there either", async () => {
    const { second } = await resentWith(envelopeOf, { on: elsewhere });
    expect(ignoredBecause()).toEqual(["unknown key"]);
    // nothing of that turn is here: the must-echo upstream refuses, and the client gets its 400
    expect(second.status).toBe(400);
    expect(JSON.stringify(second.error)).toContain("must be passed back");
  });

  test("expired", async () => {
    const { second } = await resentWith(async (first) => {
      const month = 31 * 24 * 3600 * 1000;
      const ring = new EnvelopeKeyRing(storageOf(carrierd).envelopeKeys);
      const carriers = await new Envelopes(ring).open(envelopeOf(first), OWNER_SCOPE);
      return new Envelopes(ring, { now: () => Date.now() - month }).seal(carriers!, OWNER_SCOPE);
    });
    expect(second.status).toBe(200);
    lastAccepted();
    expect(ignoredBecause()).toEqual(["expired"]);
  });

  test.each([
    ["cd1.", "malformed"],
    ["cd1.!!!!", "malformed"],
    ["cd1." + "A".repeat(30), "malformed"],
    ["cd1." + "A".repeat(80), "unknown key"],
  ])("malformed: %s", async (envelope, reason) => {
    const { second } = await resentWith(() => envelope);
    expect(second.status).toBe(200);
    lastAccepted();
    expect(ignoredBecause()).toEqual([reason]);
    // what looks like ours never goes upstream as a carrier
    expect(emulator.requestsFor("deepseek").at(-1)!.raw).not.toContain(`"${envelope}"`);
  });

  test("null, as Codex resends before it got one, and an unknown rs_ id: accepted as before, nothing logged", async () => {
    const { second } = await resentWith(() => null);
    expect(second.status).toBe(200);
    lastAccepted();
    expect(ignoredBecause()).toEqual([]);
  });

  test("a valid envelope after sessions rm is still opened (the control for the cases above)", async () => {
    const { second } = await resentWith(envelopeOf, { removeSession: true });
    expect(second.status).toBe(200);
    lastAccepted();
    expect(ignoredBecause()).toEqual([]);
  });
});

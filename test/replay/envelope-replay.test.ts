import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { carrierd, cleanEnv } from "../foundation/cli-process.js";
import { captureLog, type CapturedLog } from "../support/captured-log.js";
import { CODEX_PREAMBLE, codexTurn, kept, toolOutputs, userMessage, type CodexTurn, type Item, type Resend } from "../support/codex-client.js";
import { familyRoutes } from "../support/family-routes.js";
import { startTestGateway, storageOf, type TestGateway } from "../support/gateway.js";
import { SpecWatch } from "../support/open-responses.js";
import { startOpenAIUpstream, type OpenAIUpstream } from "../support/openai-upstream.js";
import { startPgCluster } from "../support/pg-cluster.js";
import { announceSkipped, pgSkipReason } from "../support/postgres.js";

/**
 * A stateless Responses client shaped as Codex (`store: false`, `include:
 * ["reasoning.encrypted_content"]`, its history resent on every request)
 * against DeepSeek's must-echo rule: the emulator answers 400 to a tool-call
 * turn whose `reasoning_content` is missing or not the one it issued. The
 * client resends its reasoning items without their summary, so the only
 * place that reasoning travels in is the envelope carrierd sealed.
 */

const DEEPSEEK = "deepseek/deepseek-reasoner";
const ENVELOPE = /^cd1\.[A-Za-z0-9_-]{40,}$/;

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

async function upstream(): Promise<OpenAIUpstream> {
  const started = await startOpenAIUpstream();
  stops.push(() => started.close());
  return started;
}

async function gateway(routes: string, home?: string, spec?: SpecWatch, log?: CapturedLog): Promise<TestGateway> {
  const started = await startTestGateway({ routes, home, spec, log: log?.logger });
  stops.push(() => started.stop());
  return started;
}

/**
 * Three requests of one conversation: a tool call, its output, a follow-up
 * (another tool call). `between(n, session)` runs before request n (1, 2):
 * a session removed, another instance.
 */
async function codexLoop(
  on: (turn: number) => TestGateway,
  model: string,
  stream: boolean,
  resend: Resend,
  between: (turn: number, sessionId: string) => Promise<void> = async () => undefined,
): Promise<CodexTurn[]> {
  const input: Item[] = [...CODEX_PREAMBLE, userMessage("What is the weather in Florence?")];
  const turns: CodexTurn[] = [];
  for (let turn = 0; turn < 3; turn++) {
    const answered = await codexTurn(on(turn), model, input, stream);
    turns.push(answered);
    if (answered.status !== 200) return turns;
    input.push(...kept(answered.done, resend), ...(turn === 1 ? [userMessage("And tomorrow?")] : toolOutputs(answered.done)));
    if (turn < 2) await between(turn + 1, answered.sessionId!);
  }
  return turns;
}

function reasoningItems(items: Item[]): Item[] {
  return items.filter((item) => item.type === "reasoning");
}

/** Every request the DeepSeek emulator received was accepted: no retry, no 400. */
function acceptedFirstTry(emulator: OpenAIUpstream, requests: number): void {
  const received = emulator.requestsFor("deepseek");
  expect(received.map((request) => request.status)).toEqual(Array(requests).fill(200));
}

/** The reasoning_content each assistant message of the upstream request carried. */
function echoedReasoning(emulator: OpenAIUpstream, request: number): unknown[] {
  return emulator
    .requestsFor("deepseek")
    [request]!.body.messages.filter((message) => message.role === "assistant")
    .map((message) => message.reasoning_content);
}

describe.each([false, true])("stream=%s", (stream) => {
  test("every reasoning item carries an envelope, in output_item.done and the final output alike, valid against the Open Responses schema", async () => {
    const emulator = await upstream();
    const spec = new SpecWatch();
    const carrierd = await gateway(familyRoutes(emulator), undefined, spec);
    const turns = await codexLoop(() => carrierd, DEEPSEEK, stream, "without summary");
    expect(turns.map((turn) => turn.status)).toEqual([200, 200, 200]);
    for (const turn of turns) {
      const reasoning = reasoningItems(turn.done);
      expect(reasoning).toHaveLength(1);
      expect(reasoning[0]!.encrypted_content).toMatch(ENVELOPE);
      expect(reasoningItems(turn.output)).toEqual(reasoning);
      // Codex keeps items in the order their output_item.done arrived: the reasoning item comes first, as it was opened
      expect(turn.done.map((item) => item.type)).toEqual(turn.output.map((item) => item.type));
    }
    await spec.verify({ expectSome: true });
    acceptedFirstTry(emulator, 3);
  });

  test("after sessions rm, the envelopes alone carry the reasoning back, verbatim, accepted on the first try", async () => {
    const emulator = await upstream();
    const log = captureLog();
    const carrierd = await gateway(familyRoutes(emulator), undefined, undefined, log);
    const removed: string[] = [];
    const turns = await codexLoop(
      () => carrierd,
      DEEPSEEK,
      stream,
      "without summary",
      async (_turn, sessionId) => {
        expect(await storageOf(carrierd).sessions.remove(sessionId)).toBe(true);
        removed.push(sessionId);
      },
    );
    expect(turns.map((turn) => turn.status)).toEqual([200, 200, 200]);
    expect(removed).toHaveLength(2);
    acceptedFirstTry(emulator, 3);
    const issued = emulator.requestsFor("deepseek").map((_request, index) => `Step ${index + 1}: the deepseek model thinks`);
    expect(echoedReasoning(emulator, 2).map((text) => String(text).slice(0, issued[0]!.length))).toEqual(issued.slice(0, 2));
    // the per-request debug line: turn 2 had one assistant message's carriers from an envelope, turn 3 two
    const attached = log.lines.filter((line) => line.message === "carriers attached").map((line) => line.object.from_envelopes);
    expect(attached).toEqual([0, 1, 2]);
  });

  test("the control: the same loop with encrypted_content null after sessions rm is refused by the upstream (a 400, never a 500)", async () => {
    const emulator = await upstream();
    const carrierd = await gateway(familyRoutes(emulator));
    const input: Item[] = [...CODEX_PREAMBLE, userMessage("What is the weather in Florence?")];
    const first = await codexTurn(carrierd, DEEPSEEK, input, stream);
    expect(first.status).toBe(200);
    await storageOf(carrierd).sessions.remove(first.sessionId!);
    const dropped = kept(first.done, "without summary").map((item) => (item.type === "reasoning" ? { ...item, encrypted_content: null } : item));
    const second = await codexTurn(carrierd, DEEPSEEK, [...input, ...dropped, ...toolOutputs(first.done)], stream);
    expect(second.status).toBe(400);
    expect(JSON.stringify(second.error)).toContain("must be passed back");
  });
});

test("signed reasoning_details (OpenRouter) come back byte for byte from the envelope after sessions rm", async () => {
  const emulator = await upstream();
  const carrierd = await gateway(familyRoutes(emulator));
  const turns = await codexLoop(
    () => carrierd,
    "openrouter/anthropic/claude-sonnet-4",
    true,
    "without summary",
    async (_turn, sessionId) => {
      await storageOf(carrierd).sessions.remove(sessionId);
    },
  );
  expect(turns.map((turn) => turn.status)).toEqual([200, 200, 200]);
  const [, second] = emulator.requestsFor("openrouter");
  const assistant = second!.body.messages.find((message) => message.role === "assistant")!;
  const details = assistant.reasoning_details as { signature?: string; data?: string }[];
  expect(details[0]!.signature).toMatch(/^sig-openrouter-1-/);
  expect(details[1]!.data).toBe("enc-1-AAEC/+8=");
  // the raw bytes of the upstream request hold the signature exactly as issued
  expect(second!.raw).toContain(JSON.stringify(details[0]!.signature));
});

test("carrierd sessions rm, then a second instance on the same state.db: it opens the first one's envelopes (the key is in the store)", async () => {
  const emulator = await upstream();
  const home = mkdtempSync(join(tmpdir(), "carrierd-envelope-"));
  stops.push(async () => rmSync(home, { recursive: true, force: true }));
  const routes = familyRoutes(emulator);
  const first = await startTestGateway({ routes, home });
  let second: TestGateway | undefined;
  const turns = await codexLoop(
    (turn) => (turn === 0 ? first : second!),
    DEEPSEEK,
    true,
    "without summary",
    async (turn, sessionId) => {
      if (turn !== 1) return;
      await first.stop();
      const removed = await carrierd(["sessions", "rm", sessionId, "--home", home], { env: cleanEnv() });
      expect(removed.code, removed.stderr).toBe(0);
      second = await gateway(routes, home);
    },
  );
  expect(turns.map((turn) => turn.status)).toEqual([200, 200, 200]);
  acceptedFirstTry(emulator, 3);
});

test("a key rotation (carrierd store rotate-envelope-key) leaves envelopes sealed before it opening; a gateway started after it seals with the new key", async () => {
  const emulator = await upstream();
  const home = mkdtempSync(join(tmpdir(), "carrierd-envelope-"));
  stops.push(async () => rmSync(home, { recursive: true, force: true }));
  const routes = familyRoutes(emulator);
  const carrierdA = await startTestGateway({ routes, home });
  let running = true;
  stops.push(async () => void (running && (await carrierdA.stop())));
  const keyIdOf = (turn: CodexTurn) =>
    Buffer.from(String(reasoningItems(turn.done)[0]!.encrypted_content).slice(4), "base64url")
      .subarray(0, 8)
      .toString("hex");
  const turns = await codexLoop(
    () => carrierdA,
    DEEPSEEK,
    false,
    "without summary",
    async (turn, sessionId) => {
      if (turn === 1) {
        const rotated = await carrierd(["store", "rotate-envelope-key", "--home", home], { env: cleanEnv() });
        expect(rotated.code, rotated.stderr).toBe(0);
        expect(rotated.stdout).toMatch(/generation 2\) seals from now on/);
      }
      await storageOf(carrierdA).sessions.remove(sessionId);
    },
  );
  expect(turns.map((turn) => turn.status)).toEqual([200, 200, 200]);
  acceptedFirstTry(emulator, 3);
  const listed = await carrierd(["store", "envelope-keys", "--home", home], { env: cleanEnv() });
  const [oldKey, newKey] = (await storageOf(carrierdA).envelopeKeys.ensure()).map((key) => key.id);
  expect(keyIdOf(turns[0]!)).toBe(oldKey);
  expect(listed.stdout).toContain(`${oldKey}  created`);
  expect(listed.stdout).toMatch(new RegExp(`${newKey}  created \\S+  seals`));
  await carrierdA.stop();
  running = false;
  const carrierdB = await gateway(routes, home);
  const after = await codexTurn(carrierdB, DEEPSEEK, [...CODEX_PREAMBLE, userMessage("Weather in Rome?")], false);
  expect(keyIdOf(after)).toBe(newKey);
});

announceSkipped("test/replay/envelope-replay.test.ts", 1);
describe.skipIf(pgSkipReason() !== undefined)("PostgreSQL", () => {
  test("turns rotating across two instances on one PostgreSQL store, each session removed before the next turn: every request accepted on the first try", async () => {
    const emulator = await upstream();
    const cluster = await startPgCluster(2, { routes: familyRoutes(emulator) });
    stops.push(() => cluster.stop());
    const turns = await codexLoop(
      (turn) => cluster.at(turn),
      DEEPSEEK,
      true,
      "without summary",
      async (turn, sessionId) => {
        expect(await storageOf(cluster.at(turn)).sessions.remove(sessionId)).toBe(true);
      },
    );
    expect(turns.map((turn) => turn.status)).toEqual([200, 200, 200]);
    acceptedFirstTry(emulator, 3);
    expect(await storageOf(cluster.at(0)).envelopeKeys.ensure()).toHaveLength(1);
  });
});

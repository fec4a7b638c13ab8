import { afterAll, beforeAll, expect, test } from "vitest";
import { CODEX_PREAMBLE, codexTurn, kept, toolOutputs, userMessage, type Item } from "../support/codex-client.js";
import { familyRoutes } from "../support/family-routes.js";
import { afterGatewayCommits, startTestGateway, storageOf, TEST_KEY, type TestGateway } from "../support/gateway.js";
import { startOpenAIUpstream, type OpenAIUpstream } from "../support/openai-upstream.js";
import { expectValid, getJson, sessionValidators } from "./history-support.js";

/**
 * A turn whose reasoning came back in an envelope (a stateless Responses
 * client such as Codex, `include: ["reasoning.encrypted_content"]`) says so:
 * its request's tool-call turn was matched `by: "envelope"`, even after the
 * session that stored it was removed (docs/api.md#get-v1sessionsid).
 */
let upstream: OpenAIUpstream;
let gateway: TestGateway;
beforeAll(async () => {
  upstream = await startOpenAIUpstream();
  gateway = await startTestGateway({ routes: familyRoutes(upstream) });
});
afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
});

test("the carriers a client handed back sealed are matched by envelope, and sent as reasoning_content", async () => {
  const model = "deepseek/deepseek-reasoner";
  const input: Item[] = [...CODEX_PREAMBLE, userMessage("What is the weather in Florence?")];
  const first = await codexTurn(gateway, model, input, false);
  expect(first.status).toBe(200);
  await afterGatewayCommits(gateway);
  const firstTurn = (await storageOf(gateway).sessions.show(first.sessionId!))!.turnList[0]!;
  // the store forgets the first turn: only the envelope the client resends can bring its reasoning back
  expect(await storageOf(gateway).sessions.remove(first.sessionId!)).toBe(true);
  input.push(...kept(first.done, "without summary"), ...toolOutputs(first.done));
  const second = await codexTurn(gateway, model, input, false);
  expect(second.status).toBe(200);
  expect(upstream.requestsFor("deepseek").at(-1)!.status).toBe(200);
  await afterGatewayCommits(gateway);

  const { status, body } = await getJson(gateway, TEST_KEY, `/v1/sessions/${second.sessionId!}`);
  expect(status).toBe(200);
  expectValid(sessionValidators().session, body);
  const replay = (body.turns as { replay: { matched: { message: number; by: string; turn_id: string; position: number | null }[]; attached: unknown[] } }[])[0]!
    .replay;
  expect(replay.matched.map((entry) => [entry.by, entry.turn_id, entry.position])).toEqual([["envelope", firstTurn.id, null]]);
  expect(replay.attached).toEqual([{ message: replay.matched[0]!.message, turn_id: firstTurn.id, position: null, fields: ["reasoning_content"] }]);
});

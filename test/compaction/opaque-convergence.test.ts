import "reflect-metadata";
import { afterAll, afterEach, beforeAll, expect, test } from "vitest";
import { SpecWatch } from "../support/open-responses.js";
import { SUMMARY_PREFIX } from "../../src/turn/compaction/view.js";
import type { GatewayEvent } from "../../src/foundation/event-bus/event-bus.js";
import { loadEventValidators, schemaProblems } from "../events/event-schemas.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { captureLog, collectCompactions, respond, showSession, sessionsCli, type CapturedLog } from "./support/harness.js";
import { startOpenAIUpstream, type ChatMessage, type OpenAIUpstream } from "../support/openai-upstream.js";

/**
 * A Responses chain whose turns carry large encrypted reasoning blobs
 * (6 KB each, most of every turn's weight) on a route that replays
 * `reasoning_details`. The blobs are what push the request over its budget,
 * so a tail walk that priced them differently from the estimate would keep
 * too much and need a second pass.
 */
const CONTEXT_WINDOW = 24_000;
const COMPACT_AT = 0.75;
const BUDGET = Math.floor(CONTEXT_WINDOW * COMPACT_AT);

let upstream: OpenAIUpstream;
let gateway: TestGateway;
let log: CapturedLog;
let compactions: GatewayEvent[];

beforeAll(async () => {
  upstream = await startOpenAIUpstream({ blobBytes: 6000, reasoningChars: 200 });
  log = captureLog();
  gateway = await startTestGateway({
    spec,
    log: log.logger,
    routes: `version: 1
providers:
  demo: { plugin: demo }
  opaque: { plugin: openai-compatible, base_url: "${upstream.baseUrl("sealed")}" }
models:
  - { name: demo, provider: demo, model: demo-reasoner }
  - { name: opaque-model, provider: opaque, model: opaque-1, context_window: ${CONTEXT_WINDOW}, compact_at: ${COMPACT_AT}, summarizer: demo }
carriers:
  - match: { provider: opaque }
    fields: [reasoning_content, reasoning_details]
  - match: {}
    fields: [reasoning_content]
`,
  });
  compactions = collectCompactions(gateway);
});
// every /v1/responses answer here is checked against the Open Responses spec
const spec = new SpecWatch();
afterEach(() => spec.verify());
afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
});

/** The upstream body's weight in the unit the budget is in (four bytes a token). */
const wireTokens = (raw: string) => Math.ceil(Buffer.byteLength(raw, "utf8") / 4);
const assistants = (messages: ChatMessage[]) => messages.filter((message) => message.role === "assistant");

let sessionId: string;
let lastResponse: string;
/** Branches made by the tests below, in order. */
const branchIds: string[] = [];
/** How many upstream requests (of the opaque route) were sent when each compaction happened. */
const compactedAt: number[] = [];

async function turn(input: string): Promise<void> {
  const before = compactions.length;
  const result = await respond(gateway, { model: "opaque-model", input, ...(lastResponse ? { previous_response_id: lastResponse } : {}) });
  expect(result.status, JSON.stringify(result.body)).toBe(200);
  sessionId = result.sessionId;
  lastResponse = result.body.id;
  if (compactions.length > before) compactedAt.push(upstream.received.filter((request) => request.flavor === "sealed").length - 1);
}

test("one compaction brings a history of large opaque items under the budget, and the next turns need no second pass", async () => {
  await turn("Plan a trip to Siena, please. Keep this goal in mind.");
  for (let index = 2; compactions.length === 0; index++) {
    await turn(`Question ${index}: what about day ${index}?`);
    expect(index, "the history never passed its budget").toBeLessThan(30);
  }
  const [event] = compactions;
  expect(event).toMatchObject({ type: "session.compacted", session_id: sessionId, summarizer: "demo", budget: BUDGET });
  expect(event!.tokens_before as number).toBeGreaterThan(BUDGET);
  expect(event!.tokens_after as number).toBeLessThanOrEqual(BUDGET);

  const opaque = upstream.received.filter((request) => request.flavor === "sealed");
  const compactedRequest = opaque[compactedAt[0]!]!;
  const uncompacted = opaque[compactedAt[0]! - 1]!;
  // what really went upstream: the compacted request is under the budget, the one before it was nearly there
  expect(wireTokens(compactedRequest.raw)).toBeLessThanOrEqual(BUDGET);
  expect(wireTokens(compactedRequest.raw)).toBeLessThan(wireTokens(uncompacted.raw));

  // three more turns: each adds ~2k tokens of blobs, and none triggers another compaction
  for (let index = 0; index < 3; index++) await turn(`Follow-up ${index}`);
  expect(compactions).toHaveLength(1);
  for (const request of upstream.received.filter((request) => request.flavor === "sealed").slice(compactedAt[0]!)) {
    expect(request.status).toBe(200);
    expect(wireTokens(request.raw)).toBeLessThanOrEqual(BUDGET);
  }
});

test("kept turns keep their reasoning text and encrypted reasoning_details byte-identical; head first, summary after it", () => {
  const compactedRequest = upstream.received.filter((request) => request.flavor === "sealed")[compactedAt[0]!]!;
  const messages = compactedRequest.body.messages;
  expect(messages[0]).toEqual({ role: "user", content: "Plan a trip to Siena, please. Keep this goal in mind." });
  expect(messages[1]!.role).toBe("user");
  expect(String(messages[1]!.content)).toContain(SUMMARY_PREFIX);
  const kept = assistants(messages);
  expect(kept.length).toBeGreaterThan(0);
  for (const message of kept) {
    const issued = upstream.issuedFor(`text:${String(message.content)}`)!;
    expect(issued, `kept assistant message ${String(message.content)} was issued by the upstream`).toBeDefined();
    expect(message.reasoning_content).toBe(issued.reasoning);
    // the raw wire bytes hold the blob exactly as issued
    expect(compactedRequest.raw).toContain(JSON.stringify(issued.details));
  }
  // and what was summarised is gone from the wire
  const total = upstream.received.filter((request) => request.flavor === "sealed")[compactedAt[0]! - 1]!;
  expect(assistants(total.body.messages).length).toBeGreaterThan(kept.length);
});

test("the event matches its published schema; the summariser's scratch session is not left behind", async () => {
  const problems = schemaProblems(loadEventValidators(), compactions[0]!);
  expect(problems).toEqual([]);
  const listed = JSON.parse((await sessionsCli(gateway, ["list", "--json"])).out) as { id: string }[];
  expect(listed.map((session) => session.id)).toEqual([sessionId]);
});

test("the log line names counts and sizes, never contents", () => {
  const lines = log.lines.filter((line) => line.message === "session compacted");
  expect(lines).toHaveLength(1);
  expect(lines[0]!.object).toMatchObject({
    session_id: sessionId,
    summarized_messages: expect.any(Number),
    archived_turns: expect.any(Number),
    summary_chars: expect.any(Number),
    tokens_before: expect.any(Number),
  });
  const text = JSON.stringify(lines[0]);
  expect(text).not.toContain("Siena");
  expect(text).not.toContain("Thinking");
  expect(text).not.toContain("simulated");
});

test("sessions show hides archived turns behind the checkpoint; --all shows them with every carrier still stored", async () => {
  const active = await showSession(gateway, sessionId);
  const all = await showSession(gateway, sessionId, true);
  expect(active.checkpoints).toHaveLength(1);
  const [checkpoint] = active.checkpoints;
  expect(active.turns.every((turn) => turn.active)).toBe(true);
  const archived = all.turns.filter((turn) => !turn.active);
  expect(archived).toHaveLength(checkpoint!.archived_turns);
  expect(archived.length).toBeGreaterThan(0);
  expect(all.turns).toHaveLength(active.turns.length + archived.length);
  for (const turn of archived) {
    const issued = upstream.issuedFor(`text:${turn.content}`)!;
    expect(turn.carriers).toEqual(["reasoning_text", "reasoning_details"]);
    expect(JSON.stringify(turn.reasoning_details)).toBe(JSON.stringify(issued.details));
  }
  const text = (await sessionsCli(gateway, ["show", sessionId])).out;
  expect(text).toContain(`~ checkpoint ${checkpoint!.id}`);
  expect(text).toContain(`${archived.length} archived turn(s) hidden`);
  expect(text).not.toContain("[archived]");
  expect((await sessionsCli(gateway, ["show", sessionId, "--all"])).out).toContain("[archived]");
});

test("sessions branch --at N after compaction copies the active turns with every carrier, and the checkpoint", async () => {
  const parent = await showSession(gateway, sessionId);
  const last = parent.turns.at(-1)!.position;
  const branched = await sessionsCli(gateway, ["branch", sessionId, "--at", String(last)]);
  const branchId = branched.out.trim();
  expect(branchId).toMatch(/^sess_/);
  const branch = await showSession(gateway, branchId, true);
  expect(branch.parent_id).toBe(sessionId);
  // exactly the parent's active turns, no archived ones, carriers byte for byte
  expect(branch.turns.map((turn) => turn.position)).toEqual(parent.turns.map((turn) => turn.position));
  for (const [index, turn] of branch.turns.entries()) {
    const original = parent.turns[index]!;
    expect(turn.active).toBe(true);
    expect(turn.reasoning_text).toBe(original.reasoning_text);
    expect(JSON.stringify(turn.reasoning_details)).toBe(JSON.stringify(original.reasoning_details));
  }
  expect(branch.checkpoints).toHaveLength(1);
  expect(branch.checkpoints[0]!).toMatchObject({ summary: parent.checkpoints[0]!.summary, response_id: null });
  expect(branch.checkpoints[0]!.id).not.toBe(parent.checkpoints[0]!.id);
  branchIds.push(branchId);
});

test("a branch --at N inside the summarised range is the session as it stood at N: every turn, no checkpoint", async () => {
  const all = await showSession(gateway, sessionId, true);
  const archived = all.turns.filter((turn) => !turn.active);
  const at = archived[1]!.position;
  const branchId = (await sessionsCli(gateway, ["branch", sessionId, "--at", String(at)])).out.trim();
  const branch = await showSession(gateway, branchId, true);
  expect(branch.turns.map((turn) => turn.position)).toEqual(all.turns.filter((turn) => turn.position <= at).map((turn) => turn.position));
  expect(branch.turns.every((turn) => turn.active)).toBe(true);
  expect(branch.checkpoints).toEqual([]);
});

test("a branch is independent of its parent: a second compaction and removing the parent leave it as it was", async () => {
  const branchId = branchIds[0]!;
  const before = await showSession(gateway, branchId, true);
  for (let index = 0; compactions.length < 2; index++) {
    await turn(`More about day ${index}`);
    expect(index, "no second compaction").toBeLessThan(30);
  }
  // the parent's newer checkpoint superseded (and removed) its first one
  expect(compactions[1]).toMatchObject({ superseded_checkpoint: compactions[0]!.checkpoint_id });
  const parent = await showSession(gateway, sessionId, true);
  expect(parent.checkpoints.map((checkpoint) => checkpoint.id)).toEqual([compactions[1]!.checkpoint_id]);
  expect(await showSession(gateway, branchId, true)).toEqual(before);
  expect((await sessionsCli(gateway, ["rm", sessionId])).out).toContain("removed");
  expect(await showSession(gateway, branchId, true)).toEqual(before);
});

test("a chain whose session was removed compacts afresh: its checkpoint went with the session", async () => {
  const before = compactions.length;
  const result = await respond(gateway, { model: "opaque-model", input: "After the session was removed", previous_response_id: lastResponse });
  // the removed turns took their encrypted reasoning along, and this emulator insists on it: the upstream's 400 reaches the client
  expect(result.status).toBe(400);
  expect(compactions).toHaveLength(before + 1);
  expect(compactions.at(-1)).toMatchObject({ session_id: sessionId, superseded_checkpoint: null });
  expect((await showSession(gateway, sessionId)).checkpoints).toHaveLength(1);
});

import "reflect-metadata";
import { PassThrough, Readable } from "node:stream";
import { afterAll, beforeAll, expect, test, vi } from "vitest";
import type { ChatService } from "../../src/turn/chat-service.js";
import { runChat } from "../../src/cli/commands/chat.js";
import { SUMMARY_PREFIX } from "../../src/turn/compaction/view.js";
import { CHAT_SERVICE } from "../../src/foundation/container/tokens.js";
import type { GatewayEvent } from "../../src/foundation/event-bus/event-bus.js";
import type { ChatMessage, ChatRequest } from "../../src/providers/contract.js";
import { afterGatewayCommits, startTestGateway, TEST_KEY, type TestGateway } from "../support/gateway.js";
import { collectCompactions, sessionsCli, showSession } from "./support/harness.js";

/**
 * `carrierd chat` continues its session through the Responses API (a
 * conversation named by the session id), so the gateway owns the history:
 * a long chat is compacted like any Responses chain, and `--resume` goes on
 * under the checkpoint instead of resending every turn.
 */
let gateway: TestGateway;
let compactions: GatewayEvent[];
/** The chat requests of the user's turns (summaries are the non-streamed ones). */
const turnRequests: ChatRequest[] = [];

beforeAll(async () => {
  gateway = await startTestGateway({
    routes: `version: 1
providers:
  demo: { plugin: demo }
models:
  - { name: tiny-demo, provider: demo, model: demo-reasoner, context_window: 1500 }
  - { name: demo, provider: demo, model: demo-reasoner }
carriers:
  - match: {}
    fields: [reasoning_content]
`,
  });
  compactions = collectCompactions(gateway);
  const chat = gateway.container.resolve<ChatService>(CHAT_SERVICE);
  const start = chat.start.bind(chat);
  vi.spyOn(chat, "start").mockImplementation((request, options) => {
    if (request.stream) turnRequests.push(request);
    return start(request, options);
  });
});
afterAll(async () => {
  await gateway?.stop();
});

async function chat(lines: string[], options: { resume?: string; model?: string } = {}): Promise<{ sessionId: string | undefined; printed: string }> {
  const output = new PassThrough();
  let printed = "";
  output.on("data", (chunk: Buffer) => (printed += chunk.toString()));
  if (options.resume) await afterGatewayCommits(gateway); // --resume reads the session from state.db
  const result = await runChat({
    url: gateway.url,
    key: TEST_KEY,
    home: gateway.home,
    model: options.model ?? "tiny-demo",
    resume: options.resume,
    input: Readable.from(lines.map((line) => `${line}\n`)),
    output,
    color: true,
  });
  return { sessionId: result.sessionId, printed };
}

const summaryIn = (messages: ChatMessage[]) => messages.filter((message) => typeof message.content === "string" && message.content.startsWith(SUMMARY_PREFIX));

let sessionId: string;

test("a long chat session is compacted by the gateway: session.compacted, a checkpoint, archived turns", async () => {
  const lines = Array.from({ length: 14 }, (_unused, index) => `Tell me about step ${index} of the plan.`);
  const { sessionId: id, printed } = await chat(lines);
  expect(id).toMatch(/^sess_/);
  sessionId = id!;
  expect(printed).toMatch(/\x1b\[2mthinking: \x1b\[0m\x1b\[2m/);
  expect(printed).not.toContain("[error]");
  expect(printed).toContain(`--resume ${sessionId}`);

  const ours = compactions.filter((event) => event.session_id === sessionId);
  expect(ours.length, "the chat never compacted").toBeGreaterThan(0);
  expect(ours[0]).toMatchObject({ summarizer: "tiny-demo", budget: 1200 });
  const shown = await showSession(gateway, sessionId, true);
  expect(shown.turns).toHaveLength(14);
  expect(shown.checkpoints).toHaveLength(1);
  expect(shown.turns.some((turn) => !turn.active)).toBe(true);
  // the last turn went upstream under the checkpoint, not with all 13 earlier answers
  const last = turnRequests.at(-1)!;
  expect(summaryIn(last.messages)).toHaveLength(1);
  expect(last.messages.filter((message) => message.role === "assistant").length).toBeLessThan(13);
});

test("--resume continues the conversation under its checkpoint; nothing is resent", async () => {
  const checkpoint = (await showSession(gateway, sessionId)).checkpoints.at(-1)!;
  const before = turnRequests.length;
  const { sessionId: resumed, printed } = await chat(["And what comes after that?"], { resume: sessionId });
  expect(resumed).toBe(sessionId);
  expect(printed).toContain("under its compaction checkpoint");
  expect(printed).not.toContain("[error]");
  const sent = turnRequests.slice(before);
  expect(sent).toHaveLength(1);
  const messages = sent[0]!.messages;
  // the summary in force stands in for the archived middle
  const summaries = summaryIn(messages);
  expect(summaries).toHaveLength(1);
  const latest = (await showSession(gateway, sessionId)).checkpoints.at(-1)!;
  expect(summaries[0]!.content).toContain((latest.id === checkpoint.id ? checkpoint : latest).summary.slice(0, 40));
  expect(messages.filter((message) => message.role === "assistant").length).toBeLessThan(14);
  expect(messages.at(-1)).toEqual({ role: "user", content: "And what comes after that?" });
  expect((await showSession(gateway, sessionId, true)).turns).toHaveLength(15);
});

test("a session started over chat completions resumes: handed over once, then it is the gateway's conversation", async () => {
  const first = await gateway.post("/v1/chat/completions", { model: "demo", messages: [{ role: "user", content: "Hello from an older client" }] });
  expect(first.status).toBe(200);
  const legacy = first.headers.get("x-session-id")!;
  const answer = ((await first.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content;

  const before = turnRequests.length;
  const { printed } = await chat(["Go on", "And then?"], { resume: legacy, model: "demo" });
  expect(printed).not.toContain("[error]");
  const [handover, next] = turnRequests.slice(before);
  // the first request carries the stored history (the gateway replays its reasoning by X-Session-Id)
  expect(handover!.messages.map((message) => [message.role, message.content])).toEqual([
    ["user", "Hello from an older client"],
    ["assistant", answer],
    ["user", "Go on"],
  ]);
  // the second continues the conversation the first one started
  expect(next!.messages.map((message) => message.role)).toEqual(["user", "assistant", "user", "assistant", "user"]);
  expect((await showSession(gateway, legacy)).turns).toHaveLength(3);

  // resumed again: nothing handed over twice
  const again = turnRequests.length;
  await chat(["Last one"], { resume: legacy, model: "demo" });
  expect(turnRequests.slice(again)[0]!.messages).toHaveLength(7);
});

test("a branch holding a checkpoint resumes with its summary, not the archived turns", async () => {
  const branchId = (await sessionsCli(gateway, ["branch", sessionId])).out.trim();
  expect(branchId).toMatch(/^sess_/);
  const branch = await showSession(gateway, branchId);
  expect(branch.checkpoints).toHaveLength(1);
  const before = turnRequests.length;
  const { printed } = await chat(["Branch off here."], { resume: branchId });
  expect(printed).toContain("under its compaction checkpoint");
  expect(printed).not.toContain("[error]");
  const messages = turnRequests[before]!.messages;
  expect(summaryIn(messages)).toHaveLength(1);
  expect(summaryIn(messages)[0]!.content).toContain(branch.checkpoints[0]!.summary.slice(0, 40));
  expect(messages.filter((message) => message.role === "assistant")).toHaveLength(branch.turns.length);
});

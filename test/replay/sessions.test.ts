import "reflect-metadata";
import { PassThrough, Readable } from "node:stream";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, test, vi } from "vitest";
import { runChat } from "../../src/cli/commands/chat.js";
import { sessionsCommand } from "../../src/cli/commands/sessions.js";
import { familyRoutes, WEATHER_TOOL } from "../support/family-routes.js";
import { afterGatewayCommits, startTestGateway, TEST_KEY, type TestGateway } from "../support/gateway.js";
import { startOpenAIUpstream, type OpenAIUpstream } from "../support/openai-upstream.js";
import { ask, assistantsOf, type Message } from "../support/stateless-client.js";

let upstream: OpenAIUpstream;
let home: string;
let gateway: TestGateway;
const debugLines: { object: Record<string, unknown>; message: string }[] = [];
const log = {
  level: "debug",
  isLevelEnabled: () => true,
  debug: (object: Record<string, unknown>, message: string) => debugLines.push({ object, message }),
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  trace: () => undefined,
  fatal: () => undefined,
  child: () => log,
};

beforeAll(async () => {
  upstream = await startOpenAIUpstream();
  home = mkdtempSync(join(tmpdir(), "carrierd-sessions-"));
  gateway = await startTestGateway({ routes: familyRoutes(upstream), home, log: log as never });
});
afterAll(async () => {
  await gateway.stop();
  await upstream.close();
  rmSync(home, { recursive: true, force: true });
});

/** Runs a CLI subcommand's handler in process (the gateway keeps running), returning what it printed. */
async function cli(argv: string[]): Promise<{ out: string; exitCode: number | undefined }> {
  await afterGatewayCommits(gateway);
  const printed: string[] = [];
  const logSpy = vi.spyOn(console, "log").mockImplementation((...args) => void printed.push(args.join(" ")));
  const errorSpy = vi.spyOn(console, "error").mockImplementation(() => undefined);
  const previous = process.exitCode;
  process.exitCode = undefined;
  try {
    const yargs = (await import("yargs")).default;
    await yargs(["sessions", ...argv, "--home", home])
      .option("home", { type: "string", global: true })
      .command(sessionsCommand)
      .strict()
      .fail(false)
      .parseAsync();
    return { out: printed.join("\n"), exitCode: process.exitCode as number | undefined };
  } finally {
    process.exitCode = previous;
    logSpy.mockRestore();
    errorSpy.mockRestore();
  }
}

const model = "openrouter/anthropic/claude-sonnet-4.5";
const history: Message[] = [{ role: "user", content: "Weather in Siena?" }];
let sessionId: string;

test("turns are durable: after a restart a stateless client still gets its reasoning replayed", async () => {
  const first = await ask(gateway, { model, stream: true, messages: history, tools: [WEATHER_TOOL] });
  sessionId = first.sessionId!;
  history.push(first.kept, { role: "tool", tool_call_id: (first.kept.tool_calls as { id: string }[])[0]!.id, content: "25 C" });
  const second = await ask(gateway, { model, messages: history, tools: [WEATHER_TOOL] });
  expect(second.sessionId).toBe(sessionId);
  history.push(second.kept, { role: "user", content: "and Lucca?" });

  await gateway.stop();
  gateway = await startTestGateway({ routes: familyRoutes(upstream), home, log: log as never });
  const before = upstream.requestsFor("openrouter").length;
  const third = await ask(gateway, { model, messages: history, tools: [WEATHER_TOOL] });
  expect(third.status, JSON.stringify(third.error)).toBe(200);
  expect(third.sessionId).toBe(sessionId);
  const [toolTurn, textTurn] = assistantsOf(upstream.requestsFor("openrouter")[before]!.body);
  expect(toolTurn!.reasoning).toBe(first.reasoning);
  expect(textTurn!.reasoning).toBe(second.reasoning);
  expect((toolTurn!.reasoning_details as { signature?: string }[])[0]!.signature).toMatch(/^sig-openrouter-/);
  history.push(third.kept);
});

test("a debug line per request names the fields attached per message, never their contents", () => {
  const lines = debugLines.filter((line) => line.message === "carriers attached" && line.object.session_id === sessionId);
  expect(lines.length).toBeGreaterThanOrEqual(3);
  const last = lines.at(-1)!;
  expect(last.object.attached).toEqual([
    { index: 1, turn: expect.stringMatching(/^turn_/), fields: ["reasoning_content", "reasoning", "reasoning_details"] },
    { index: 3, turn: expect.stringMatching(/^turn_/), fields: ["reasoning_content", "reasoning", "reasoning_details"] },
  ]);
  expect(JSON.stringify(last.object)).not.toContain("Step ");
});

test("sessions list / show while the gateway runs: every carrier, verbatim", async () => {
  const listed = JSON.parse((await cli(["list", "--json"])).out) as { id: string; turns: number }[];
  expect(listed.find((row) => row.id === sessionId)?.turns).toBe(3);
  const shown = JSON.parse((await cli(["show", sessionId, "--json"])).out) as {
    turns: { position: number; carriers: string[]; reasoning_details: unknown; provider: string; host: string; upstream_model: string }[];
  };
  expect(shown.turns.map((turn) => turn.position)).toEqual([1, 2, 3]);
  expect(shown.turns[0]).toMatchObject({
    provider: "openrouter",
    host: "127.0.0.1",
    upstream_model: "anthropic/claude-sonnet-4.5",
    carriers: ["reasoning_text", "reasoning_details"],
  });
  // what went upstream on replay is byte-identical to what is stored
  const lastRequest = upstream.requestsFor("openrouter").at(-1)!;
  expect(JSON.stringify(assistantsOf(lastRequest.body)[0]!.reasoning_details)).toBe(JSON.stringify(shown.turns[0]!.reasoning_details));
  expect((await cli(["show", sessionId])).out).toContain("reasoning_details [reasoning.text, reasoning.encrypted]");
});

test("replay to a strict route never changes the stored history", async () => {
  const before = (await cli(["show", sessionId, "--json"])).out;
  const strict = await ask(gateway, { model: "mistral/magistral-medium", messages: [...history, { role: "user", content: "switching models" }] });
  expect(strict.status).toBe(200);
  const after = JSON.parse((await cli(["show", sessionId, "--json"])).out) as { turns: unknown[] };
  const previous = JSON.parse(before) as { turns: unknown[] };
  expect(after.turns.slice(0, 3)).toEqual(previous.turns);
});

test("branch --at copies turns 1..N with every carrier; rm removes", async () => {
  const branchId = (await cli(["branch", sessionId, "--at", "2"])).out.trim();
  expect(branchId).toMatch(/^sess_/);
  const original = JSON.parse((await cli(["show", sessionId, "--json"])).out) as { turns: Record<string, unknown>[] };
  const branch = JSON.parse((await cli(["show", branchId, "--json"])).out) as { parent_id: string; turns: Record<string, unknown>[] };
  expect(branch.parent_id).toBe(sessionId);
  expect(branch.turns).toHaveLength(2);
  for (const [index, turn] of branch.turns.entries()) {
    for (const key of ["content", "tool_calls", "reasoning_text", "reasoning_details", "native_record", "provider", "host", "upstream_model"])
      expect(turn[key], key).toEqual(original.turns[index]![key]);
  }
  // the branch is the most recent holder of those fingerprints: a stateless client continuing turns 1..2 lands in it
  const continued = await ask(gateway, { model, messages: history.slice(0, 4), tools: [WEATHER_TOOL] });
  expect(continued.sessionId).toBe(branchId);

  expect((await cli(["rm", branchId])).out).toContain("removed");
  expect((await cli(["show", branchId])).exitCode).toBe(1);
});

test("chat: reasoning shown live and dimmed; --resume continues the session with its reasoning replayed", async () => {
  const output = new PassThrough();
  let printed = "";
  output.on("data", (chunk: Buffer) => (printed += chunk.toString()));
  const first = await runChat({ url: gateway.url, key: TEST_KEY, home, model: "local/qwen3", input: Readable.from(["Hello there\n"]), output, color: true });
  expect(printed).toMatch(/\x1b\[2mthinking: \x1b\[0m\x1b\[2mStep \d+/);
  expect(printed).toContain("Answer ");
  expect(first.sessionId).toMatch(/^sess_/);

  const before = upstream.requestsFor("local").length;
  await afterGatewayCommits(gateway); // --resume reads the session from state.db
  await runChat({
    url: gateway.url,
    key: TEST_KEY,
    home,
    model: "local/qwen3",
    resume: first.sessionId,
    input: Readable.from(["Go on\n"]),
    output,
    color: false,
  });
  const sent = upstream.requestsFor("local")[before]!.body;
  expect(sent.messages.map((message) => message.role)).toEqual(["user", "assistant", "user"]);
  expect(assistantsOf(sent)[0]!.reasoning_content).toMatch(/^Step \d+: the local model thinks about "Hello there"/);
  expect(sent.messages[0]!.content).toBe("Hello there");
});

test("sessions list: the id column is as wide as the longest id shown, so the columns stay aligned", async () => {
  const long = `pi-agent:${"x".repeat(60)}`;
  const named = await ask(gateway, { model: "local/qwen3", messages: [{ role: "user", content: "a long session name" }] }, { "X-Session-Id": long });
  expect(named.sessionId).toBe(long);
  const lines = (await cli(["list"])).out.split("\n");
  const longLine = lines.find((line) => line.startsWith(`${long} `))!;
  const shortLine = lines.find((line) => line.startsWith(`${sessionId} `))!;
  expect(longLine, lines.join("\n")).toBeDefined();
  expect(shortLine, lines.join("\n")).toBeDefined();
  // the turns column starts at the same place on every line
  expect(shortLine.indexOf(" turns")).toBe(longLine.indexOf(" turns"));
  expect(shortLine.slice(sessionId.length, long.length)).toBe(" ".repeat(long.length - sessionId.length));
});

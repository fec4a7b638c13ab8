import { afterAll, beforeAll, expect, test } from "vitest";
import { readSse } from "../support/gateway.js";
import { DEEPSEEK_MISSING_REASONING, startDeepSeek, type DeepSeekUpstream } from "../support/openai-upstream.js";

/**
 * The emulator the agent CLI tests run against, asked directly: it drives a
 * tool loop with the tool the request offers, and refuses, as DeepSeek
 * does, a tool-call turn resent without the reasoning it came with.
 */
const FILES = [
  { path: "/project/plan-notes.txt", marker: "plan-1234" },
  { path: "/project/status-notes.txt", marker: "status-5678" },
];
const READ_TOOL = {
  type: "function",
  function: { name: "read", parameters: { type: "object", properties: { filePath: { type: "string" } }, required: ["filePath"] } },
};
const USER = { role: "user", content: "Read both notes files." };

let upstream: DeepSeekUpstream;
beforeAll(async () => {
  upstream = await startDeepSeek({ answers: { kind: "tool-loop", files: FILES }, echo: "own-calls" });
});
afterAll(() => upstream.close());

async function ask(messages: unknown[], tools: unknown[] = [READ_TOOL]): Promise<Response> {
  return fetch(`${upstream.baseUrl}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "deepseek-reasoner", stream: true, messages, tools }),
  });
}

interface Streamed {
  reasoning: string;
  content: string;
  call?: { id: string; type: "function"; function: { name: string; arguments: string } };
}

/** The assistant turn a client rebuilds from the stream. */
async function streamed(response: Response): Promise<Streamed> {
  expect(response.status).toBe(200);
  const turn: Streamed = { reasoning: "", content: "" };
  for (const event of (await readSse(response)).events as { choices: { delta: Record<string, unknown> }[] }[]) {
    const delta = event.choices[0]!.delta as {
      reasoning_content?: string | null;
      content?: string | null;
      tool_calls?: { id?: string; function: { name?: string; arguments: string } }[];
    };
    turn.reasoning += delta.reasoning_content ?? "";
    turn.content += delta.content ?? "";
    const call = delta.tool_calls?.[0];
    if (call?.id) turn.call = { id: call.id, type: "function", function: { name: call.function.name!, arguments: "" } };
    if (call && turn.call) turn.call.function.arguments += call.function.arguments;
  }
  return turn;
}

function resent(turn: Streamed, reasoning: string | undefined): Record<string, unknown> {
  return { role: "assistant", content: "", ...(reasoning === undefined ? {} : { reasoning_content: reasoning }), tool_calls: [turn.call] };
}

function result(turn: Streamed, text: string): Record<string, unknown> {
  return { role: "tool", tool_call_id: turn.call!.id, content: text };
}

test("reads each file with the offered tool, then answers with what the results said", async () => {
  const first = await streamed(await ask([USER]));
  expect(first.reasoning).not.toBe("");
  expect(first.call!.function).toEqual({ name: "read", arguments: JSON.stringify({ filePath: "/project/plan-notes.txt" }) });
  const second = await streamed(await ask([USER, resent(first, first.reasoning), result(first, "1: The word is plan-1234.")]));
  expect(JSON.parse(second.call!.function.arguments)).toEqual({ filePath: "/project/status-notes.txt" });
  const history = [USER, resent(first, first.reasoning), result(first, "plan-1234"), resent(second, second.reasoning), result(second, "status-5678")];
  const final = await streamed(await ask(history));
  expect(final.call).toBeUndefined();
  expect(final.content).toBe("The notes say plan-1234 and status-5678.");
  expect(upstream.exchanges.at(-1)).toMatchObject({ answer: "final", resentToolTurns: 2 });
});

test("a shell stands in when no reading tool is offered; a request without tools gets a plain answer", async () => {
  const bash = { type: "function", function: { name: "bash", parameters: { type: "object", required: ["command", "description"] } } };
  const viaShell = await streamed(await ask([USER], [bash]));
  expect(JSON.parse(viaShell.call!.function.arguments)).toMatchObject({ command: "cat /project/plan-notes.txt" });
  const plain = await streamed(await ask([USER], []));
  expect(plain.call).toBeUndefined();
  expect(plain.reasoning).not.toBe("");
  expect(plain.content).not.toBe("");
});

test.each([
  ["left out", undefined],
  ["empty", ""],
  ["altered", (text: string) => text.normalize("NFD")],
  ["trimmed", (text: string) => text.slice(0, -1)],
] as const)("a tool-call turn resent with its reasoning %s is DeepSeek's 400", async (_, change) => {
  const first = await streamed(await ask([USER]));
  const reasoning = typeof change === "function" ? change(first.reasoning) : change;
  expect(reasoning).not.toBe(first.reasoning);
  const response = await ask([USER, resent(first, reasoning), result(first, "plan-1234")]);
  expect(response.status).toBe(400);
  expect(await response.json()).toEqual(DEEPSEEK_MISSING_REASONING);
  expect(upstream.exchanges.at(-1)).toMatchObject({ status: 400, answer: "rejected" });
});

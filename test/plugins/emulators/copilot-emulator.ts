import { createHmac, randomBytes } from "node:crypto";
import { startEmulator, type Emulator, type Received, type Reply } from "./http-emulator.js";

/**
 * A GitHub Copilot chat emulator (OpenAI-style). It answers
 * with `reasoning_text` and a `reasoning_opaque` that, when streaming, is
 * split into two fragments around the parallel tool calls — so only a client
 * that concatenates them holds the real value. On later requests an
 * assistant tool-call turn it issued must carry exactly that opaque; a
 * `reasoning_text` without `reasoning_opaque`, or any key it does not know,
 * is a 400 in Copilot's phrasing.
 */
const SECRET = randomBytes(32);
const ASSISTANT_KEYS = new Set(["role", "content", "tool_calls", "name", "reasoning_text", "reasoning_opaque"]);
const TOP_LEVEL = new Set([
  "model",
  "messages",
  "stream",
  "stream_options",
  "tools",
  "tool_choice",
  "max_tokens",
  "temperature",
  "top_p",
  "n",
  "parallel_tool_calls",
]);

type Message = Record<string, unknown> & { role: string };

export async function startCopilotEmulator(options: { token: string }): Promise<Emulator & { issued: Map<string, string> }> {
  const issued = new Map<string, string>();
  const emulator = await startEmulator((request) => handle(request, options.token, issued));
  return { ...emulator, issued };
}

/** Copilot's 400 body. */
export function copilotRefusal(message: string): { error: { message: string; code: string } } {
  return { error: { message, code: "invalid_request_body" } };
}

/** What Copilot answers to an assistant tool-call turn whose `reasoning_opaque` is not the one it issued. */
export const opaqueRefusal = (index: number) => copilotRefusal(`messages[${index}]: invalid reasoning_opaque`);

function reject(message: string): Reply {
  return { status: 400, json: copilotRefusal(message) };
}

function handle(request: Received, token: string, issued: Map<string, string>): Reply {
  if (request.method !== "POST" || request.path !== "/chat/completions") return { status: 404, json: { error: { message: "not found" } } };
  if (request.headers.authorization !== `Bearer ${token}`) return { status: 401, json: { error: { message: "unauthorized: token expired" } } };
  const body = request.body ?? {};
  for (const key of Object.keys(body)) if (!TOP_LEVEL.has(key)) return reject(`CAPIError: 400 Unrecognized request argument supplied: ${key}`);
  const messages = body.messages as Message[];
  for (const [index, message] of messages.entries()) {
    if (message.role !== "assistant") continue;
    for (const key of Object.keys(message))
      if (!ASSISTANT_KEYS.has(key)) return reject(`CAPIError: 400 Unrecognized request argument supplied: messages[${index}].${key}`);
    if (message.reasoning_text !== undefined && message.reasoning_opaque === undefined)
      return reject(`messages[${index}]: reasoning_text requires reasoning_opaque`);
    const calls = (message.tool_calls as { id: string }[] | undefined) ?? [];
    const expected = calls.map((call) => issued.get(call.id)).find((value) => value !== undefined);
    if (expected !== undefined && message.reasoning_opaque !== expected) return { status: 400, json: opaqueRefusal(index) };
  }
  const tools = (body.tools as { function: { name: string } }[] | undefined) ?? [];
  const last = messages.at(-1)!;
  const text = last.role === "tool" ? "The tools answered; summarise." : "Plan it: call the tool twice.";
  const opaque = `op-${createHmac("sha256", SECRET).update(randomBytes(8)).digest("base64")}`;
  const calls =
    last.role !== "tool" && tools.length > 0
      ? ["Rome", "Oslo"].map((city) => ({
          id: `call_${randomBytes(6).toString("hex")}`,
          type: "function",
          function: { name: tools[0]!.function.name, arguments: JSON.stringify({ location: city }) },
        }))
      : [];
  for (const call of calls) issued.set(call.id, opaque);
  const content = calls.length > 0 ? null : "Done: it is mild.";
  const finish = calls.length > 0 ? "tool_calls" : "stop";
  const base = { id: "chatcmpl-copilot", object: "chat.completion", created: 1, model: body.model };
  if (body.stream !== true) {
    return {
      status: 200,
      json: {
        ...base,
        choices: [
          {
            index: 0,
            message: { role: "assistant", content, reasoning_text: text, reasoning_opaque: opaque, ...(calls.length ? { tool_calls: calls } : {}) },
            finish_reason: finish,
          },
        ],
        usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
      },
    };
  }
  const half = Math.floor(opaque.length / 2);
  const deltas: Record<string, unknown>[] = [{ role: "assistant", reasoning_text: text.slice(0, 4) }, { reasoning_text: text.slice(4) }];
  if (calls.length > 0) {
    deltas.push({ reasoning_opaque: opaque.slice(0, half), tool_calls: [{ index: 0, ...calls[0] }] });
    deltas.push({ reasoning_opaque: opaque.slice(half), tool_calls: [{ index: 1, ...calls[1] }] });
  } else {
    deltas.push({ reasoning_opaque: opaque });
    deltas.push({ content });
  }
  const chunks = deltas.map((delta, index) => ({
    ...base,
    object: "chat.completion.chunk",
    choices: [{ index: 0, delta, finish_reason: index === deltas.length - 1 ? finish : null }],
  }));
  return { status: 200, sse: [...chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`), "data: [DONE]\n\n"].join("") };
}

import { createHmac, randomBytes } from "node:crypto";
import { startEmulator, type Emulator, type Received, type Reply } from "./http-emulator.js";

/**
 * Gemini 3 through Google's OpenAI-compatible endpoint
 * (`POST /v1beta/openai/chat/completions`, https://ai.google.dev/gemini-api/docs/openai),
 * as strict as the real one:
 *
 * - a thought signature rides on a tool call as
 *   `extra_content.google.thought_signature` and must come back on the same
 *   call (https://ai.google.dev/gemini-api/docs/thought-signatures; the shape
 *   as Continue reads it, https://github.com/continuedev/continue/pull/8865);
 *   in the current turn (after the last user message) the first call of each
 *   assistant step must carry one — this server's own for that call, or the
 *   documented `skip_thought_signature_validator` — else the 400 quoted in
 *   https://github.com/openai/openai-python/issues/2758 and
 *   https://github.com/manthanabc/paws/issues/103 ("Function call is missing a
 *   thought_signature in functionCall parts. …");
 * - any field it does not know, at the top level, on a message or on a tool
 *   call, is "Invalid JSON payload received. Unknown name … Cannot find
 *   field." (https://github.com/FuzzAnything/PromptFuzz/issues/42,
 *   https://github.com/liliMozi/openhanako/issues/394; the `at '…'` location of
 *   a nested field as Google words it, https://github.com/gera2ld/ai.nvim/issues/13);
 * - its error bodies are a JSON array around one error object, as those
 *   issues show.
 *
 * It runs a tool loop: to a question it answers two parallel calls (only the
 * first signed), to each round of tool results one more signed call, and
 * after `steps` rounds a text answer.
 */
const SECRET = randomBytes(32);
export const SKIP = "skip_thought_signature_validator";
const TOP_LEVEL = new Set([
  "model",
  "messages",
  "stream",
  "stream_options",
  "tools",
  "tool_choice",
  "temperature",
  "top_p",
  "n",
  "stop",
  "max_tokens",
  "max_completion_tokens",
  "reasoning_effort",
  "response_format",
  "seed",
  "presence_penalty",
  "frequency_penalty",
  "extra_body",
]);
const MESSAGE_KEYS = new Set(["role", "content", "name", "tool_calls", "tool_call_id", "extra_content"]);
const TOOL_CALL_KEYS = new Set(["id", "type", "function", "extra_content"]);

type ToolCall = { id?: string; type?: string; function: { name: string; arguments: string }; extra_content?: { google?: { thought_signature?: unknown } } };
type Message = { role: string; content?: unknown; tool_calls?: ToolCall[] } & Record<string, unknown>;

/** The signature this server issues for a call: bound to its name and arguments. */
export function signCall(name: string, args: string): string {
  return createHmac("sha256", SECRET).update(`${name}\u0000${args}`).digest("base64");
}

export async function startGeminiOpenAIEmulator(options: { apiKey: string; steps?: number }): Promise<Emulator> {
  return startEmulator((request) => handle(request, options.apiKey, options.steps ?? 3));
}

/** Google's error envelope on this endpoint: an array around one error. */
function error(message: string, status = 400, code = "INVALID_ARGUMENT"): Reply {
  return { status, json: [{ error: { code: status, message, status: code } }] };
}

function unknownName(name: string, at?: string): Reply {
  return error(`Invalid JSON payload received. Unknown name "${name}"${at ? ` at '${at}'` : ""}: Cannot find field.`);
}

function handle(request: Received, apiKey: string, steps: number): Reply {
  if (request.method !== "POST" || request.path !== "/v1beta/openai/chat/completions") return error("Not found", 404, "NOT_FOUND");
  if (request.headers.authorization !== `Bearer ${apiKey}`) return error("API key not valid. Please pass a valid API key.");
  const body = request.body;
  if (!body || !Array.isArray(body.messages)) return error("Invalid JSON payload received.");
  for (const key of Object.keys(body)) if (!TOP_LEVEL.has(key)) return unknownName(key);
  const messages = body.messages as Message[];
  const problem = check(messages);
  if (problem) return problem;
  const tools = (body.tools as { function: { name: string } }[] | undefined) ?? [];
  const message = answer(messages, tools[0]?.function.name, steps);
  const id = `chatcmpl-${randomBytes(4).toString("hex")}`;
  const finish = message.tool_calls ? "tool_calls" : "stop";
  const usage = { prompt_tokens: 20, completion_tokens: 8, total_tokens: 28 };
  if (body.stream !== true)
    return {
      status: 200,
      json: { id, object: "chat.completion", created: 1, model: body.model, choices: [{ index: 0, message, finish_reason: finish }], usage },
    };
  const chunk = (delta: object, finishReason: string | null) =>
    `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created: 1, model: body.model, choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`;
  const deltas = message.tool_calls
    ? [chunk({ role: "assistant", tool_calls: message.tool_calls.map((call, index) => ({ index, ...call })) }, null)]
    : [chunk({ role: "assistant", content: String(message.content).slice(0, 3) }, null), chunk({ content: String(message.content).slice(3) }, null)];
  return { status: 200, sse: `${deltas.join("")}${chunk({}, finish)}data: [DONE]\n\n` };
}

/**
 * Field names, then signatures. Positions count Gemini's contents: the
 * system message is not one, and consecutive tool results are one.
 */
function check(messages: Message[]): Reply | undefined {
  for (const [i, message] of messages.entries()) {
    for (const key of Object.keys(message)) if (!MESSAGE_KEYS.has(key)) return unknownName(key, `messages[${i}]`);
    for (const [j, call] of (message.tool_calls ?? []).entries())
      for (const key of Object.keys(call)) if (!TOOL_CALL_KEYS.has(key)) return unknownName(key, `messages[${i}].tool_calls[${j}]`);
  }
  let position = 0;
  let previous = "";
  const lastUser = messages.findLastIndex((message) => message.role === "user");
  for (const [i, message] of messages.entries()) {
    if (message.role === "system" || message.role === "developer") continue;
    if (!(message.role === "tool" && previous === "tool")) position++;
    previous = message.role;
    for (const call of message.tool_calls ?? []) {
      const signature = call.extra_content?.google?.thought_signature;
      if (typeof signature === "string" && signature !== SKIP && signature !== signCall(call.function.name, call.function.arguments))
        return error("Corrupted thought signature.");
    }
    const first = message.tool_calls?.[0];
    if (i > lastUser && first && typeof first.extra_content?.google?.thought_signature !== "string")
      return error(
        `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${first.function.name}\` , position ${position}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`,
      );
  }
  return undefined;
}

function answer(messages: Message[], tool: string | undefined, steps: number): Message {
  const lastUser = messages.findLastIndex((message) => message.role === "user");
  const done = messages.slice(lastUser + 1).filter((message) => message.role === "assistant" && message.tool_calls?.length).length;
  if (!tool || done >= steps) return { role: "assistant", content: `Done after ${done} steps.` };
  const call = (city: string, sign: boolean): ToolCall => {
    const args = JSON.stringify({ location: city });
    const made: ToolCall = { id: `function-call-${randomBytes(6).toString("hex")}`, type: "function", function: { name: tool, arguments: args } };
    if (sign) made.extra_content = { google: { thought_signature: signCall(tool, args) } };
    return made;
  };
  const calls = done === 0 ? [call("Rome", true), call("Oslo", false)] : [call(`City ${done}`, true)];
  return { role: "assistant", content: null, tool_calls: calls };
}

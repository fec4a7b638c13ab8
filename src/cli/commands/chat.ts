import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline/promises";
import type { Readable, Writable } from "node:stream";
import { createParser } from "eventsource-parser";
import type { CommandModule } from "yargs";
import { DEFAULT_PORT, resolveHome } from "../../config/options.js";
import type { ChatMessage } from "../../plugins/contract.js";
import { historyOf } from "../../sessions/history.js";
import { openState } from "../../store/open-state.js";

interface ChatFlags {
  home?: string;
  model?: string;
  resume?: string;
  url?: string;
}

const DIM = "\x1b[2m";
const RESET = "\x1b[0m";

export const chatCommand: CommandModule<object, ChatFlags> = {
  command: "chat",
  describe: "interactive terminal chat through the running gateway; reasoning shown live, dimmed",
  builder: (yargs) =>
    yargs
      .option("model", { type: "string", demandOption: true, describe: "a model name from routes.yaml" })
      .option("resume", { type: "string", describe: "continue a stored session, its reasoning replayed" })
      .option("url", { type: "string", describe: "gateway URL; env CARRIERD_URL, default http://CARRIERD_HOST:CARRIERD_PORT" }) as never,
  handler: async (flags) => {
    const home = resolveHome(flags.home);
    const url = flags.url ?? process.env.CARRIERD_URL ?? `http://${process.env.CARRIERD_HOST ?? "127.0.0.1"}:${process.env.CARRIERD_PORT ?? DEFAULT_PORT}`;
    const key = process.env.CARRIERD_API_KEY || readKey(home);
    if (!key) {
      console.error(`no API key: set CARRIERD_API_KEY or start the gateway once so it writes ${join(home, "api_key")}`);
      process.exitCode = 1;
      return;
    }
    await runChat({ url, key, home, model: flags.model!, resume: flags.resume, input: process.stdin, output: process.stdout, color: process.stdout.isTTY === true });
  },
};

export interface ChatOptions {
  url: string;
  key: string;
  home: string;
  model: string;
  resume?: string;
  input: Readable;
  output: Writable;
  color: boolean;
}

/** The chat loop: one streamed request per line typed; the session id the gateway answers with carries on. */
export async function runChat(options: ChatOptions): Promise<{ sessionId: string | undefined; messages: ChatMessage[] }> {
  const messages: ChatMessage[] = [];
  let sessionId = options.resume;
  if (options.resume) {
    const state = openState(options.home);
    try {
      const session = state.sessions.session(options.resume);
      if (!session) throw new Error(`no session ${options.resume}`);
      messages.push(...historyOf(session.turnList, session.prompts));
      options.output.write(`resuming ${options.resume}: ${session.turns} turn(s), stored reasoning is replayed by the gateway\n`);
    } finally {
      state.close();
    }
  }
  const lines = createInterface({ input: options.input, output: options.output, terminal: false });
  const dim = (text: string) => (options.color ? `${DIM}${text}${RESET}` : text);
  options.output.write("you> ");
  for await (const line of lines) {
    const text = line.trim();
    if (text === "") {
      options.output.write("you> ");
      continue;
    }
    if (text === "/exit" || text === "/quit") break;
    messages.push({ role: "user", content: text });
    const turn = await send(options, messages, sessionId, (kind, delta) => options.output.write(kind === "reasoning" ? dim(delta) : delta));
    if (turn.error) {
      options.output.write(`\n[error] ${turn.error}\n`);
      messages.pop();
    } else {
      sessionId = turn.sessionId ?? sessionId;
      messages.push(turn.message);
      options.output.write("\n");
    }
    options.output.write("you> ");
  }
  options.output.write(sessionId ? `\nsession ${sessionId} (resume with: carrierd chat --model ${options.model} --resume ${sessionId})\n` : "\n");
  return { sessionId, messages };
}

async function send(
  options: ChatOptions,
  messages: ChatMessage[],
  sessionId: string | undefined,
  show: (kind: "reasoning" | "content", delta: string) => void,
): Promise<{ message: ChatMessage; sessionId?: string; error?: string }> {
  const headers: Record<string, string> = { authorization: `Bearer ${options.key}`, "content-type": "application/json" };
  if (sessionId) headers["x-session-id"] = sessionId;
  let response: Response;
  try {
    response = await fetch(`${options.url.replace(/\/+$/, "")}/v1/chat/completions`, { method: "POST", headers, body: JSON.stringify({ model: options.model, stream: true, messages }) });
  } catch (error) {
    return { message: { role: "assistant" }, error: `cannot reach the gateway at ${options.url}: ${(error as Error).message}` };
  }
  if (!response.ok || !response.body) {
    const body = (await response.json().catch(() => ({}))) as { error?: { message?: string } };
    return { message: { role: "assistant" }, error: `${response.status} ${body.error?.message ?? response.statusText}` };
  }
  let content = "";
  let inReasoning = false;
  let error: string | undefined;
  const toolCalls: NonNullable<ChatMessage["tool_calls"]> = [];
  const parser = createParser({
    onEvent(event) {
      if (event.data === "[DONE]") return;
      const chunk = JSON.parse(event.data) as { error?: { message: string }; choices?: { delta?: { content?: string; reasoning_content?: string; tool_calls?: { index: number; id?: string; function?: { name?: string; arguments?: string } }[] } }[] };
      if (chunk.error) error = chunk.error.message;
      const delta = chunk.choices?.[0]?.delta;
      if (delta?.reasoning_content) {
        if (!inReasoning) show("reasoning", "thinking: ");
        inReasoning = true;
        show("reasoning", delta.reasoning_content);
      }
      if (delta?.content) {
        if (inReasoning) show("content", "\n");
        inReasoning = false;
        content += delta.content;
        show("content", delta.content);
      }
      for (const call of delta?.tool_calls ?? []) {
        const entry = (toolCalls[call.index] ??= { id: "", type: "function", function: { name: "", arguments: "" } });
        if (call.id) entry.id = call.id;
        if (call.function?.name) entry.function.name = call.function.name;
        if (call.function?.arguments) entry.function.arguments += call.function.arguments;
      }
    },
  });
  const decoder = new TextDecoder();
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
  if (error) return { message: { role: "assistant" }, error };
  const message: ChatMessage = { role: "assistant", content: content.length > 0 || toolCalls.length === 0 ? content : null };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return { message, sessionId: response.headers.get("x-session-id") ?? undefined };
}

function readKey(home: string): string | undefined {
  const file = join(home, "api_key");
  return existsSync(file) ? readFileSync(file, "utf8").trim() || undefined : undefined;
}

import { existsSync, readFileSync } from "node:fs";
import { scopeOfStored } from "../../conversation/session-scope.js";
import { join } from "node:path";
import { createInterface } from "node:readline/promises";
import type { Readable, Writable } from "node:stream";
import { createParser } from "eventsource-parser";
import type { CommandModule } from "yargs";
import { DEFAULT_PORT, resolveHome } from "../../foundation/config/options.js";
import { newId } from "../../turn/sessions/session-id.js";
import { summaryMessage } from "../../turn/compaction/view.js";
import type { ChatMessage, JsonObject } from "../../providers/contract.js";
import { historyOf } from "../../turn/sessions/history.js";
import { withState } from "./with-state.js";

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
      .option("url", { type: "string", describe: "gateway URL; env CARRIERD_URL, default http://CARRIERD_HOST:CARRIERD_PORT" }),
  handler: async (flags) => {
    const home = resolveHome(flags.home);
    const url = flags.url ?? process.env.CARRIERD_URL ?? `http://${process.env.CARRIERD_HOST ?? "127.0.0.1"}:${process.env.CARRIERD_PORT ?? DEFAULT_PORT}`;
    const key = process.env.CARRIERD_API_KEY || readKey(home);
    if (!key) {
      console.error(`no API key: set CARRIERD_API_KEY or start the gateway once so it writes ${join(home, "api_key")}`);
      process.exitCode = 1;
      return;
    }
    await runChat({
      url,
      key,
      home,
      model: flags.model!,
      resume: flags.resume,
      input: process.stdin,
      output: process.stdout,
      color: process.stdout.isTTY === true,
    });
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

/**
 * The chat loop: one streamed Responses request per line typed. The session
 * is a Responses conversation named by the session id, so the gateway owns
 * its history: it replays the stored reasoning and compacts the history
 * when it outgrows the model (docs/compaction.md), and `--resume` picks the
 * conversation up under its checkpoint.
 */
export async function runChat(options: ChatOptions): Promise<{ sessionId: string | undefined; messages: ChatMessage[] }> {
  const messages: ChatMessage[] = [];
  // the conversation chat continues is named by its session id (a new one by a session id of chat's own)
  const conversation = options.resume ?? newId("sess_");
  let sessionId = conversation;
  // a session that is no conversation yet (started by a chat-completions client or an older `chat`, a branch) is handed over once
  let seed: ChatMessage[] = [];
  if (options.resume) {
    const resumed = await resumePoint(options.home, options.resume);
    seed = resumed.seed;
    messages.push(...resumed.history);
    options.output.write(
      `resuming ${options.resume}: ${resumed.turns} turn(s), stored reasoning is replayed by the gateway${resumed.checkpoint ? ", under its compaction checkpoint" : ""}\n`,
    );
  }
  const lines = createInterface({ input: options.input, output: options.output, terminal: false });
  const dim = (text: string) => (options.color ? `${DIM}${text}${RESET}` : text);
  let answered = options.resume !== undefined;
  options.output.write("you> ");
  for await (const line of lines) {
    const text = line.trim();
    if (text === "") {
      options.output.write("you> ");
      continue;
    }
    if (text === "/exit" || text === "/quit") break;
    const user: ChatMessage = { role: "user", content: text };
    const turn = await send(options, conversation, [...seed, user], (kind, delta) => options.output.write(kind === "reasoning" ? dim(delta) : delta));
    if (turn.error) {
      options.output.write(`\n[error] ${turn.error}\n`);
    } else {
      sessionId = turn.sessionId ?? sessionId;
      seed = [];
      answered = true;
      messages.push(user, { role: "assistant", content: turn.content });
      options.output.write("\n");
    }
    options.output.write("you> ");
  }
  const ended = answered ? sessionId : undefined;
  options.output.write(ended ? `\nsession ${ended} (resume with: carrierd chat --model ${options.model} --resume ${ended})\n` : "\n");
  return { sessionId: ended, messages };
}

interface ResumePoint {
  readonly turns: number;
  /** The conversation as a client would resend it (what `runChat` returns). */
  readonly history: ChatMessage[];
  /** What the first request must send before its user message: empty when the conversation is the gateway's already. */
  readonly seed: ChatMessage[];
  readonly checkpoint: boolean;
}

/**
 * Where `--resume ID` picks up. A session `chat` started is the conversation
 * named ID: the gateway continues it under its checkpoint, nothing is resent.
 * Any other session is handed over once, as the input of the first request
 * (X-Session-Id: ID, so every stored turn's reasoning is replayed); from then
 * on it is the conversation ID. A compacted session is handed over as it goes
 * upstream: its head, its summary and the active turns.
 */
function resumePoint(home: string, id: string): Promise<ResumePoint> {
  return withState({ home }, async (storage) => {
    const session = await storage.sessions.show(id);
    if (!session) throw new Error(`no session ${id}`);
    // chat speaks with the owner key, whose sessions are its own by their bare names (docs/sessions-and-replay.md)
    if (scopeOfStored(id) !== undefined)
      throw new Error(`session ${id} belongs to an access key; carrierd chat continues the owner key's sessions (branch it with that key's client)`);
    const owned = await storage.responses.conversation(id);
    if (owned && owned.sessionId !== id) throw new Error(`conversation ${id} belongs to session ${owned.sessionId}; resume that session`);
    const { compaction } = session;
    const checkpoint = compaction.checkpoints.at(-1);
    const history = historyOf(session.turnList, session.prompts);
    if (owned) return { turns: session.turns, history, seed: [], checkpoint: checkpoint !== undefined };
    if (!checkpoint) return { turns: session.turns, history, seed: history, checkpoint: false };
    const active = session.turnList.flatMap((turn, index) => (compaction.archived.has(turn.position) ? [] : [index]));
    // the head (system messages and the first user message) opened turn 1, archived in the session, dropped in a branch
    const head = compaction.archived.has(session.turnList[0]?.position ?? -1) ? leadingHead(session.prompts[0] ?? []) : [];
    const kept = historyOf(
      active.map((index) => session.turnList[index]),
      active.map((index) => session.prompts[index]),
    );
    const seed = [...head, summaryMessage(checkpoint.summary), ...kept];
    return { turns: session.turns, history: seed, seed, checkpoint: true };
  });
}

/** The leading system messages and the first user message. */
function leadingHead(prompt: readonly ChatMessage[]): ChatMessage[] {
  const user = prompt.findIndex((message) => message.role === "user");
  return user < 0 ? prompt.filter((message) => message.role === "system") : prompt.slice(0, user + 1);
}

/** One turn: POST /v1/responses continuing the conversation, reasoning and text shown as they stream. */
async function send(
  options: ChatOptions,
  conversation: string,
  input: ChatMessage[],
  show: (kind: "reasoning" | "content", delta: string) => void,
): Promise<{ content: string; sessionId?: string; error?: string }> {
  // X-Session-Id names the session a new conversation starts (or a handed-over one continues); an existing conversation knows its own
  const headers: Record<string, string> = { authorization: `Bearer ${options.key}`, "content-type": "application/json", "x-session-id": conversation };
  const body = { model: options.model, stream: true, conversation, input: input.flatMap(inputItems) };
  let response: Response;
  try {
    response = await fetch(`${options.url.replace(/\/+$/, "")}/v1/responses`, { method: "POST", headers, body: JSON.stringify(body) });
  } catch (error) {
    return { content: "", error: `cannot reach the gateway at ${options.url}: ${(error as Error).message}` };
  }
  if (!response.ok || !response.body) {
    const failure = (await response.json().catch(() => ({}))) as { error?: { message?: string } };
    return { content: "", error: `${response.status} ${failure.error?.message ?? response.statusText}` };
  }
  let content = "";
  let inReasoning = false;
  let error: string | undefined;
  let finished = false;
  const parser = createParser({
    onEvent(event) {
      const data = JSON.parse(event.data) as {
        type?: string;
        delta?: string;
        message?: string;
        error?: { message?: string };
        response?: { error?: { message?: string } | null };
      };
      switch (data.type) {
        case "response.reasoning_summary_text.delta":
          if (!inReasoning) show("reasoning", "thinking: ");
          inReasoning = true;
          show("reasoning", data.delta ?? "");
          break;
        case "response.output_text.delta":
          if (inReasoning) show("content", "\n");
          inReasoning = false;
          content += data.delta ?? "";
          show("content", data.delta ?? "");
          break;
        case "response.completed":
        case "response.incomplete":
          finished = true;
          break;
        case "error":
          error ??= data.error?.message ?? data.message ?? "the gateway reported an error";
          break;
        case "response.failed":
          error ??= data.response?.error?.message ?? "the response failed";
          break;
      }
    },
  });
  const decoder = new TextDecoder();
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
  if (error) return { content, error };
  if (!finished) return { content, error: "the stream ended before the response completed" };
  return { content, sessionId: response.headers.get("x-session-id") ?? undefined };
}

/** A chat message as Responses input items (the hand-over of a session that is no conversation yet). */
function inputItems(message: ChatMessage): JsonObject[] {
  switch (message.role) {
    case "assistant": {
      const items: JsonObject[] = [];
      const text = textOf(message.content);
      if (text || !message.tool_calls?.length) items.push({ type: "message", role: "assistant", content: text });
      for (const call of message.tool_calls ?? [])
        items.push({ type: "function_call", call_id: call.id, name: call.function.name, arguments: call.function.arguments });
      return items;
    }
    case "tool":
      return [{ type: "function_call_output", call_id: message.tool_call_id ?? "", output: textOf(message.content) }];
    default:
      return [
        {
          type: "message",
          role: message.role === "user" ? "user" : "system",
          content: typeof message.content === "string" || message.content == null ? (message.content ?? "") : message.content.map(inputPart),
        },
      ];
  }
}

function inputPart(part: JsonObject): JsonObject {
  if (part.type === "image_url" && part.image_url && typeof part.image_url === "object") {
    const image = part.image_url as JsonObject;
    return image.detail ? { type: "input_image", image_url: image.url ?? "", detail: image.detail } : { type: "input_image", image_url: image.url ?? "" };
  }
  if (part.type === "file" && part.file && typeof part.file === "object") return { type: "input_file", ...(part.file as JsonObject) };
  return { type: "input_text", text: typeof part.text === "string" ? part.text : "" };
}

function textOf(content: ChatMessage["content"]): string {
  if (typeof content === "string") return content;
  return (content ?? []).map((part) => (typeof part.text === "string" ? part.text : "")).join("");
}

function readKey(home: string): string | undefined {
  const file = join(home, "api_key");
  return existsSync(file) ? readFileSync(file, "utf8").trim() || undefined : undefined;
}

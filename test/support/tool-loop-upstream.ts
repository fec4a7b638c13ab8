import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A loopback stand-in for DeepSeek's chat completions in thinking mode that
 * drives an agent through a real multi-step tool loop: it reads a file with a
 * tool the client offers (picked by name from the request's tool list), once
 * per fixture file, then answers with what the files said. It enforces
 * DeepSeek's rule for tool calls (https://api-docs.deepseek.com/guides/thinking_mode#tool-calls):
 * every assistant turn that called a tool must come back in every later
 * request with its `reasoning_content`, and here it must be the very text
 * that turn produced; otherwise the answer is DeepSeek's own 400.
 */

/** DeepSeek's answer to an assistant tool-call turn without its reasoning (V4 thinking mode). */
export const DEEPSEEK_MISSING_REASONING = {
  error: {
    message: "The `reasoning_content` in the thinking mode must be passed back to the API.",
    type: "invalid_request_error",
    param: null,
    code: "invalid_request_error",
  },
} as const;

/** A file the model reads through the client's tool, and the words that prove it was read. */
export interface FixtureFile {
  /** Absolute path. */
  readonly path: string;
  /** A word that is in the file and in no prompt: the final answer quotes it only after a tool result carried it. */
  readonly marker: string;
}

export interface UpstreamExchange {
  readonly body: ChatBody;
  /** The body's bytes as they arrived. */
  readonly raw: string;
  readonly status: number;
  /** What the emulator answered: a tool call (with the tool's name), a final answer, or a plain answer to a request without tools. */
  readonly answer: "tool_call" | "final" | "plain" | "rejected";
  readonly tool?: string;
  /** Why a request was refused (400). */
  readonly reason?: string;
  /** How many earlier tool-call turns the request resent, each with its verbatim reasoning (when accepted). */
  readonly resentToolTurns: number;
}

export interface ToolLoopUpstream {
  readonly baseUrl: string;
  readonly exchanges: readonly UpstreamExchange[];
  close(): Promise<void>;
}

interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

interface ChatMessage {
  role: string;
  content?: unknown;
  reasoning_content?: unknown;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
}

interface ChatBody {
  model: string;
  stream?: boolean;
  tools?: { type: string; function?: { name: string; parameters?: { required?: string[] } } }[];
  messages: ChatMessage[];
}

/**
 * How to read a file with each tool an agent CLI offers, by tool name, in
 * order of preference: a reading tool first (opencode's and pi's `read`,
 * Gemini CLI's `read_file`), then a shell (Codex's `exec_command`, opencode's and pi's `bash`).
 */
const READERS: readonly { name: string; args: (path: string, required: readonly string[]) => Record<string, unknown> }[] = [
  { name: "read", args: (path, required) => ({ [required[0] ?? "path"]: path }) },
  { name: "read_file", args: (path, required) => ({ [required[0] ?? "file_path"]: path }) },
  { name: "exec_command", args: (path) => ({ cmd: `cat ${path}` }) },
  { name: "bash", args: (path) => ({ command: `cat ${path}`, description: "Print the notes file" }) },
  { name: "shell", args: (path) => ({ command: ["cat", path] }) },
];

function textOf(content: unknown): string {
  return typeof content === "string" ? content : JSON.stringify(content ?? "");
}

/** Why DeepSeek would refuse this history, or undefined: each tool-call turn must carry the reasoning that turn produced. */
function missingReasoning(messages: readonly ChatMessage[], issued: ReadonlyMap<string, string>): string | undefined {
  for (const [index, message] of messages.entries()) {
    if (message.role !== "assistant" || !message.tool_calls?.length) continue;
    const expected = issued.get(message.tool_calls[0]!.id);
    if (expected === undefined) return `messages[${index}] calls ${message.tool_calls[0]!.id}, a tool call this upstream never made`;
    if (message.reasoning_content === undefined || message.reasoning_content === null) return `messages[${index}] has no reasoning_content`;
    if (message.reasoning_content !== expected) return `messages[${index}].reasoning_content is not the reasoning of that turn`;
  }
  return undefined;
}

/** Splits text into stream fragments of a few characters, as DeepSeek streams tokens. */
function fragments(text: string): string[] {
  return text.match(/.{1,12}/gsu) ?? [];
}

class ChunkWriter {
  private readonly id = randomUUID();
  private readonly created = Math.floor(Date.now() / 1000);

  constructor(
    private readonly response: ServerResponse,
    private readonly model: string,
  ) {}

  write(delta: Record<string, unknown>, finish: string | null = null, usage: unknown = null): void {
    const chunk = {
      id: this.id,
      object: "chat.completion.chunk",
      created: this.created,
      model: this.model,
      system_fingerprint: "fp_emulated",
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      usage,
    };
    this.response.write(`data: ${JSON.stringify(chunk)}\n\n`);
  }
}

const USAGE = { prompt_tokens: 400, completion_tokens: 60, total_tokens: 460, completion_tokens_details: { reasoning_tokens: 30 } };

function answer(response: ServerResponse, body: ChatBody, reasoning: string, content: string, call?: ToolCall): void {
  const finish = call ? "tool_calls" : "stop";
  if (!body.stream) {
    const message = { role: "assistant", content, reasoning_content: reasoning, ...(call ? { tool_calls: [call] } : {}) };
    response.writeHead(200, { "content-type": "application/json" });
    response.end(
      JSON.stringify({
        id: randomUUID(),
        object: "chat.completion",
        created: Math.floor(Date.now() / 1000),
        model: body.model,
        choices: [{ index: 0, message, logprobs: null, finish_reason: finish }],
        usage: USAGE,
      }),
    );
    return;
  }
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const chunks = new ChunkWriter(response, body.model);
  chunks.write({ role: "assistant", content: null, reasoning_content: "" });
  for (const piece of fragments(reasoning)) chunks.write({ content: null, reasoning_content: piece });
  if (call) {
    chunks.write({ tool_calls: [{ index: 0, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } }] });
    for (const piece of fragments(call.function.arguments)) chunks.write({ tool_calls: [{ index: 0, function: { arguments: piece } }] });
  } else {
    for (const piece of fragments(content)) chunks.write({ content: piece, reasoning_content: null });
  }
  chunks.write({ content: "", reasoning_content: null }, finish, USAGE);
  response.end("data: [DONE]\n\n");
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    request.setEncoding("utf8");
    request.on("data", (chunk: string) => (text += chunk));
    request.on("end", () => resolve(text));
    request.on("error", reject);
  });
}

/** Starts the emulator; `files` are read one per tool-call turn, in order, before the final answer. */
export async function startToolLoopUpstream(files: readonly FixtureFile[]): Promise<ToolLoopUpstream> {
  const exchanges: UpstreamExchange[] = [];
  /** The reasoning each tool-call turn produced, by the id of its call. */
  const issued = new Map<string, string>();
  let turns = 0;

  const handle = (raw: string, response: ServerResponse): void => {
    const body = JSON.parse(raw) as ChatBody;
    const turn = ++turns;
    const refusal = missingReasoning(body.messages, issued);
    const resentToolTurns = body.messages.filter((message) => message.role === "assistant" && message.tool_calls?.length).length;
    if (refusal) {
      exchanges.push({ body, raw, status: 400, answer: "rejected", reason: refusal, resentToolTurns });
      response.writeHead(400, { "content-type": "application/json" });
      response.end(JSON.stringify(DEEPSEEK_MISSING_REASONING));
      return;
    }
    const lastUser = body.messages.map((message) => message.role).lastIndexOf("user");
    const results = body.messages.slice(lastUser + 1).filter((message) => message.role === "tool");
    const offered = new Map(
      (body.tools ?? []).flatMap((tool) => (tool.function ? [[tool.function.name, tool.function.parameters?.required ?? []] as const] : [])),
    );
    const reader = READERS.find((candidate) => offered.has(candidate.name));
    if (!reader) {
      // a request without tools (a title, a summary): DeepSeek answers it with reasoning and text
      exchanges.push({ body, raw, status: 200, answer: "plain", resentToolTurns });
      answer(response, body, `Turn ${turn}: a short reply is all this needs.`, "Reading the notes");
      return;
    }
    const next = files[results.length];
    if (next) {
      const call: ToolCall = {
        id: `call_${turn}_${randomUUID().slice(0, 8)}`,
        type: "function",
        function: { name: reader.name, arguments: JSON.stringify(reader.args(next.path, offered.get(reader.name)!)) },
      };
      // every turn reasons differently, with characters a careless re-encoding would alter
      const reasoning = `Turn ${turn} — I should read ${next.path} with \`${reader.name}\` before I answer; naïve guesses won't do. ${randomUUID()}`;
      issued.set(call.id, reasoning);
      exchanges.push({ body, raw, status: 200, answer: "tool_call", tool: reader.name, resentToolTurns });
      answer(response, body, reasoning, "", call);
      return;
    }
    const seen = files.filter((file) => results.some((result) => textOf(result.content).includes(file.marker)));
    const text =
      seen.length === files.length ? `The notes say ${files.map((file) => file.marker).join(" and ")}.` : "The tool results did not contain the notes.";
    exchanges.push({ body, raw, status: 200, answer: "final", resentToolTurns });
    answer(response, body, `Turn ${turn}: the tool results are in; I can answer now.`, text);
  };

  const server: Server = createServer((request, response) => {
    readBody(request)
      .then((text) => handle(text, response))
      .catch((error: unknown) => {
        response.writeHead(400, { "content-type": "application/json" });
        response.end(JSON.stringify({ error: { message: String(error), type: "invalid_request_error", param: null, code: "invalid_request_error" } }));
      });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    exchanges,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { startEmulator, type Emulator, type Received, type Reply } from "./http-emulator.js";

/**
 * An Anthropic Messages API emulator that enforces what the real API
 * enforces for thinking, with its exact error bodies (https://docs.claude.com/en/docs/build-with-claude/extended-thinking):
 *
 * - a `thinking` block's `signature` is an HMAC over its text: change one byte
 *   of either and the request fails with "Invalid `signature` in `thinking` block";
 *   a `redacted_thinking` block's `data` carries its own MAC likewise;
 * - with thinking enabled, the final assistant turn holding `tool_use` must
 *   start with a thinking block ("Expected `thinking` or `redacted_thinking`,
 *   but found `tool_use`…");
 * - any key it does not know is "<path>: Extra inputs are not permitted"
 *   (so a leaked `native_record` or `reasoning_content` fails);
 * - `max_tokens` must be greater than `thinking.budget_tokens`;
 * - adaptive thinking (`thinking: {type: "adaptive", display}`) thinks like
 *   enabled thinking; with `display: "omitted"` (the default of Opus 4.7 and
 *   later) each thinking block comes with empty text and its signature only
 *   (https://github.com/docker/docker-agent/pull/3415), and must come back
 *   like any other.
 * - `context_management` is known only under its beta header
 *   (`anthropic-beta: context-management-2025-06-27`);
 * - `POST /v1/messages/count_tokens` answers `{input_tokens}` (its count: a
 *   token per four bytes of the body's messages, system and tools).
 *
 * It answers a user question with thinking (+ optionally a redacted block)
 * and a call of the first offered tool, and a tool result with thinking and text.
 */
export interface AnthropicEmulator extends Emulator {
  sign(thinking: string): string;
  /** The body of every answer it sent, in order, as its bytes went out. */
  readonly answers: string[];
}

export interface AnthropicEmulatorOptions {
  apiKey: string;
  redacted?: boolean;
  /** Usage as Anthropic reports it with prompt caching: `cache_creation_input_tokens` and `cache_read_input_tokens` beside `input_tokens`. */
  cacheUsage?: boolean;
  /** An answer given before any check (a rate limit the account hit, an overload). */
  before?: (request: Received) => Reply | undefined;
}

const SECRET = randomBytes(32);
const TOP_LEVEL = new Set([
  "model",
  "messages",
  "max_tokens",
  "system",
  "tools",
  "tool_choice",
  "thinking",
  "stream",
  "stop_sequences",
  "temperature",
  "top_p",
  "top_k",
  "metadata",
  "output_config",
  "service_tier",
]);
const BLOCK_KEYS: Record<string, Set<string>> = {
  text: new Set(["type", "text", "cache_control", "citations"]),
  thinking: new Set(["type", "thinking", "signature"]),
  redacted_thinking: new Set(["type", "data"]),
  tool_use: new Set(["type", "id", "name", "input", "cache_control"]),
  tool_result: new Set(["type", "tool_use_id", "content", "is_error", "cache_control"]),
  image: new Set(["type", "source", "cache_control"]),
};
const DOCS = "https://docs.claude.com/en/docs/build-with-claude/extended-thinking";

export function sign(thinking: string): string {
  return createHmac("sha256", SECRET).update(thinking, "utf8").digest("base64");
}

function redactedData(): string {
  const payload = randomBytes(24).toString("base64");
  return `${payload}.${createHmac("sha256", SECRET).update(payload).digest("base64")}`;
}

function verify(expected: string, actual: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(actual);
  return a.length === b.length && timingSafeEqual(a, b);
}

export async function startAnthropicEmulator(options: AnthropicEmulatorOptions): Promise<AnthropicEmulator> {
  const answers: string[] = [];
  const emulator = await startEmulator((request) => {
    const reply = options.before?.(request) ?? handle(request, options);
    answers.push("json" in reply ? JSON.stringify(reply.json) : "sse" in reply ? reply.sse : reply.bytes.toString("utf8"));
    return reply;
  });
  return { ...emulator, sign, answers };
}

function invalid(message: string, status = 400): Reply {
  return {
    status,
    json: {
      type: "error",
      error: { type: status === 401 ? "authentication_error" : "invalid_request_error", message },
      request_id: `req_${randomBytes(8).toString("hex")}`,
    },
  };
}

type Block = Record<string, unknown> & { type?: string };
type Message = { role: string; content: string | Block[] } & Record<string, unknown>;

function handle(request: Received, options: AnthropicEmulatorOptions): Reply {
  const counting = request.path === "/v1/messages/count_tokens";
  if (request.method !== "POST" || (request.path !== "/v1/messages" && !counting))
    return { status: 404, json: { type: "error", error: { type: "not_found_error", message: "Not found" } } };
  if (request.headers["x-api-key"] !== options.apiKey) return invalid("invalid x-api-key", 401);
  if (!request.headers["anthropic-version"]) return invalid("anthropic-version: header is required");
  const body = request.body;
  if (!body) return invalid("There was an error parsing the body of your request.");
  const betas = String(request.headers["anthropic-beta"] ?? "").split(",");
  for (const key of Object.keys(body)) {
    if (key === "context_management" && betas.includes("context-management-2025-06-27")) continue;
    if (!TOP_LEVEL.has(key)) return invalid(`${key}: Extra inputs are not permitted`);
  }
  if (counting) return { status: 200, json: { input_tokens: Math.ceil(JSON.stringify([body.system ?? "", body.messages, body.tools ?? []]).length / 4) } };
  const problem = checkMessages(body.messages as Message[], body.thinking as { type?: string } | undefined, betas);
  if (problem) return invalid(problem);
  const thinking = body.thinking as { type?: string; budget_tokens?: number; display?: string } | undefined;
  const thinkingOn = thinking?.type === "enabled" || thinking?.type === "adaptive";
  if (thinking?.type === "enabled" && !(typeof body.max_tokens === "number" && body.max_tokens > (thinking.budget_tokens ?? 0))) {
    return invalid(
      `\`max_tokens\` must be greater than \`thinking.budget_tokens\`. Please consult our documentation at ${DOCS}#max-tokens-and-context-window-size`,
    );
  }
  const content = answer(body, thinkingOn, options.redacted === true, thinking?.display === "omitted");
  let stopReason = content.some((block) => block.type === "tool_use") ? "tool_use" : "end_turn";
  let stopSequence: string | null = null;
  const last = content.at(-1);
  for (const sequence of Array.isArray(body.stop_sequences) ? (body.stop_sequences as string[]) : []) {
    const at = last?.type === "text" ? String(last.text).indexOf(sequence) : -1;
    if (at < 0) continue;
    last!.text = String(last!.text).slice(0, at);
    stopReason = "stop_sequence";
    stopSequence = sequence;
    break;
  }
  const message = {
    id: `msg_${randomBytes(8).toString("hex")}`,
    type: "message",
    role: "assistant",
    model: body.model,
    content,
    stop_reason: stopReason,
    stop_sequence: stopSequence,
    usage: options.cacheUsage
      ? { input_tokens: 42, cache_creation_input_tokens: 1200, cache_read_input_tokens: 3400, output_tokens: 17, service_tier: "standard" }
      : { input_tokens: 42, output_tokens: 17 },
  };
  return body.stream === true ? { status: 200, sse: stream(message) } : { status: 200, json: message };
}

/** Every block's keys, signatures and data; then the tool-use rule. */
function checkMessages(messages: Message[], thinking: { type?: string } | undefined, betas: string[]): string | undefined {
  if (!Array.isArray(messages) || messages.length === 0) return "messages: Field required";
  for (const [i, message] of messages.entries()) {
    const systemAllowed = message.role === "system" && betas.includes("mid-conversation-tool-changes-2026-07-01");
    if (message.role !== "user" && message.role !== "assistant" && !systemAllowed) return `messages.${i}.role: Input should be 'user' or 'assistant'`;
    // a message's own output_config (its effort for the turns after it) is known under the per-turn-control beta
    const perTurn = betas.includes("per-turn-control-2026-07-01");
    for (const key of Object.keys(message))
      if (key !== "role" && key !== "content" && !(key === "output_config" && perTurn)) return `messages.${i}.${key}: Extra inputs are not permitted`;
    if (typeof message.content === "string") continue;
    for (const [j, block] of message.content.entries()) {
      const allowed = BLOCK_KEYS[block.type ?? ""];
      if (!allowed) return `messages.${i}.content.${j}.type: Input tag '${String(block.type)}' found using 'type' does not match any of the expected tags`;
      for (const key of Object.keys(block)) if (!allowed.has(key)) return `messages.${i}.content.${j}.${block.type}.${key}: Extra inputs are not permitted`;
      if (block.type === "thinking" && !verify(sign(String(block.thinking)), String(block.signature)))
        return `messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`;
      if (block.type === "redacted_thinking") {
        const [payload, mac] = String(block.data).split(".");
        if (!payload || !mac || !verify(createHmac("sha256", SECRET).update(payload).digest("base64"), mac))
          return `messages.${i}.content.${j}: Invalid \`data\` in \`redacted_thinking\` block`;
      }
    }
  }
  if (thinking?.type !== "enabled" && thinking?.type !== "adaptive") return undefined;
  const lastAssistant = messages.findLastIndex((message) => message.role === "assistant");
  const final = messages[lastAssistant];
  if (!final || typeof final.content === "string" || !final.content.some((block) => block.type === "tool_use")) return undefined;
  const first = final.content[0]!;
  if (first.type === "thinking" || first.type === "redacted_thinking") return undefined;
  return `messages.${lastAssistant}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first.type}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`. Please consult our documentation at ${DOCS}`;
}

function answer(body: Record<string, unknown>, thinkingOn: boolean, redacted: boolean, omitted = false): Block[] {
  const messages = body.messages as Message[];
  const last = messages.at(-1)!;
  const results = Array.isArray(last.content) ? last.content.filter((block) => block.type === "tool_result") : [];
  const tools = (body.tools as { name: string }[] | undefined) ?? [];
  const blocks: Block[] = [];
  const think = (text: string) => {
    // an omitted block's signature still seals the thinking it stands for; the emulator binds it to the empty text it sends
    if (thinkingOn) blocks.push({ type: "thinking", thinking: omitted ? "" : text, signature: sign(omitted ? "" : text) });
  };
  if (results.length > 0) {
    const result = results[0]!.content as { text: string }[] | string | undefined;
    const text = typeof result === "string" ? result : (result?.map((part) => part.text).join("") ?? "");
    think(`The tool answered ${text}. I can answer now.`);
    blocks.push({ type: "text", text: `It is ${text}.` });
  } else if (tools.length > 0) {
    if (thinkingOn && redacted) blocks.push({ type: "redacted_thinking", data: redactedData() });
    think(`The user wants ${tools[0]!.name}. I will call it for Florence.`);
    blocks.push({ type: "tool_use", id: `toolu_${randomBytes(10).toString("hex")}`, name: tools[0]!.name, input: { location: "Florence, Italy" } });
  } else {
    think("A plain question. A plain answer.");
    blocks.push({ type: "text", text: "Hello." });
  }
  return blocks;
}

/** The same message as Anthropic streams it: `event:` lines, deltas split mid-word, a ping, the signature last. */
function stream(
  message: { content: Block[]; usage: { input_tokens: number; output_tokens: number }; stop_reason: string; stop_sequence: string | null } & Record<
    string,
    unknown
  >,
): string {
  const events: [string, unknown][] = [];
  events.push([
    "message_start",
    { type: "message_start", message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage: { ...message.usage, output_tokens: 1 } } },
  ]);
  message.content.forEach((block, index) => {
    if (block.type === "thinking") {
      events.push(["content_block_start", { type: "content_block_start", index, content_block: { type: "thinking", thinking: "", signature: "" } }]);
      events.push(["ping", { type: "ping" }]);
      const text = String(block.thinking);
      const half = Math.floor(text.length / 2);
      for (const piece of [text.slice(0, half), text.slice(half)])
        events.push(["content_block_delta", { type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: piece } }]);
      events.push(["content_block_delta", { type: "content_block_delta", index, delta: { type: "signature_delta", signature: block.signature } }]);
    } else if (block.type === "redacted_thinking") {
      events.push(["content_block_start", { type: "content_block_start", index, content_block: block }]);
    } else if (block.type === "text") {
      events.push(["content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } }]);
      events.push(["content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text: block.text } }]);
    } else if (block.type === "tool_use") {
      events.push(["content_block_start", { type: "content_block_start", index, content_block: { ...block, input: {} } }]);
      const input = JSON.stringify(block.input);
      for (const piece of [input.slice(0, 5), input.slice(5)])
        events.push(["content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: piece } }]);
    }
    events.push(["content_block_stop", { type: "content_block_stop", index }]);
  });
  events.push([
    "message_delta",
    {
      type: "message_delta",
      delta: { stop_reason: message.stop_reason, stop_sequence: message.stop_sequence },
      usage: { output_tokens: message.usage.output_tokens },
    },
  ]);
  events.push(["message_stop", { type: "message_stop" }]);
  return events.map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`).join("");
}

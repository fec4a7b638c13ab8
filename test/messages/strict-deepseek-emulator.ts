import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** DeepSeek's answer to a tool-call turn sent back without its reasoning (https://api-docs.deepseek.com/guides/thinking_mode). */
export const MISSING_REASONING = "The `reasoning_content` in the thinking mode must be passed back to the API.";

interface ChatBody {
  model: string;
  stream?: boolean;
  tools?: { type: string; function: { name: string; parameters?: unknown } }[];
  messages: { role: string; content?: unknown; reasoning_content?: unknown; tool_calls?: { id: string; function: { name: string; arguments: string } }[] }[];
}

/** What the model does with a request that offers tools and does not end in a tool result: call this tool with these arguments. */
export type ToolPlan = (tools: string[], lastUserText: string) => { name: string; arguments: Record<string, unknown> } | undefined;

export interface StrictDeepSeek {
  readonly baseUrl: string;
  /** Every request body received, parsed, in order. */
  readonly requests: ChatBody[];
  /** The status of every answer, in order. */
  readonly statuses: number[];
  close(): Promise<void>;
}

/**
 * A loopback stand-in for DeepSeek's chat completions in thinking mode that
 * enforces the rule its API states: a tool-call turn's `reasoning_content`
 * must come back in every later request. Stricter than DeepSeek, it
 * compares it with the reasoning it produced for that turn, byte for byte
 * (a gateway that rewrites or loses it is caught). Answers in DeepSeek's
 * wire shapes, streamed (reasoning_content deltas, then content or
 * tool_calls, usage in the finishing chunk) or whole. With tools offered and
 * no tool result last, it calls the tool `plan` picks (the first offered,
 * by default); after a tool result it answers with what the tool said.
 * `firstByteDelayMs` holds every answer that long before its first byte,
 * `finishDelayMs` a stream that long before its finishing chunk.
 */
export async function startStrictDeepSeek(plan?: ToolPlan, options: { firstByteDelayMs?: number; finishDelayMs?: number } = {}): Promise<StrictDeepSeek> {
  const reasoningByCall = new Map<string, string>();
  const requests: ChatBody[] = [];
  const statuses: number[] = [];
  let turn = 0;
  const server: Server = createServer((request, response) => {
    let text = "";
    request.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
    request.on("end", () => void answer());
    const answer = async () => {
      if (options.firstByteDelayMs) await new Promise((resolve) => setTimeout(resolve, options.firstByteDelayMs));
      const body = JSON.parse(text) as ChatBody;
      requests.push(body);
      for (const message of body.messages) {
        if (message.role !== "assistant" || !message.tool_calls?.length) continue;
        const produced = message.tool_calls.map((call) => reasoningByCall.get(call.id)).find((reasoning) => reasoning !== undefined);
        if (typeof message.reasoning_content !== "string" || (produced !== undefined && message.reasoning_content !== produced)) {
          statuses.push(400);
          response.writeHead(400, { "content-type": "application/json" });
          response.end(JSON.stringify({ error: { message: MISSING_REASONING, type: "invalid_request_error", param: null, code: "invalid_request_error" } }));
          return;
        }
      }
      statuses.push(200);
      turn++;
      const last = body.messages[body.messages.length - 1]!;
      const lastUser = [...body.messages].reverse().find((message) => message.role === "user");
      const fullText = textOf(lastUser?.content);
      const userText = fullText.slice(0, 200);
      const tools = (body.tools ?? []).map((tool) => tool.function.name);
      const call = last.role !== "tool" && tools.length > 0 ? (plan ?? firstTool)(tools, fullText) : undefined;
      const reasoning = `Turn ${turn}: the user wrote ${JSON.stringify(userText.slice(0, 60))}. ${call ? `I will call ${call.name}.` : "I can answer now."} (${randomBytes(4).toString("hex")})`;
      const answer = last.role === "tool" ? `The tool answered: ${textOf(last.content).slice(0, 300)}` : call ? "" : `Hello from the emulator, turn ${turn}.`;
      const toolCall = call ? { id: `call_00_${randomBytes(12).toString("hex")}`, name: call.name, arguments: JSON.stringify(call.arguments) } : undefined;
      if (toolCall) reasoningByCall.set(toolCall.id, reasoning);
      const finish = toolCall ? "tool_calls" : "stop";
      const usage = {
        prompt_tokens: 40,
        completion_tokens: 20,
        total_tokens: 60,
        prompt_cache_hit_tokens: 8,
        prompt_cache_miss_tokens: 32,
        completion_tokens_details: { reasoning_tokens: 12 },
      };
      const head = { id: `emu-${turn}`, created: 1_700_000_000, model: body.model, system_fingerprint: "fp_emulator" };
      if (!body.stream) {
        const message: Record<string, unknown> = { role: "assistant", content: answer, reasoning_content: reasoning };
        if (toolCall) message.tool_calls = [{ index: 0, id: toolCall.id, type: "function", function: { name: toolCall.name, arguments: toolCall.arguments } }];
        response.writeHead(200, { "content-type": "application/json" });
        response.end(JSON.stringify({ ...head, object: "chat.completion", choices: [{ index: 0, message, logprobs: null, finish_reason: finish }], usage }));
        return;
      }
      const chunk = (delta: Record<string, unknown>, finishReason: string | null = null, extra: Record<string, unknown> = {}) =>
        `data: ${JSON.stringify({ ...head, object: "chat.completion.chunk", choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }], ...extra })}\n\n`;
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write(chunk({ role: "assistant", content: null, reasoning_content: "" }));
      for (const piece of reasoning.match(/.{1,12}/gs) ?? []) response.write(chunk({ content: null, reasoning_content: piece }));
      for (const piece of answer.match(/.{1,12}/gs) ?? []) response.write(chunk({ content: piece, reasoning_content: null }));
      if (toolCall) {
        response.write(chunk({ tool_calls: [{ index: 0, id: toolCall.id, type: "function", function: { name: toolCall.name, arguments: "" } }] }));
        for (const piece of toolCall.arguments.match(/.{1,10}/gs) ?? []) response.write(chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }));
      }
      if (options.finishDelayMs) await new Promise((resolve) => setTimeout(resolve, options.finishDelayMs));
      response.write(chunk({ content: "", reasoning_content: null }, finish, { usage }));
      response.end("data: [DONE]\n\n");
    };
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    statuses,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const firstTool: ToolPlan = (tools) => ({ name: tools[0]!, arguments: { location: "Paris" } });

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((part: { text?: unknown }) => (typeof part?.text === "string" ? part.text : "")).join("");
  return "";
}

/** routes.yaml: `demo`, and the strict emulator as `deepseek-reasoner` (and other models, `other-reasoner`, `deepseek-v4-pro`) with DeepSeek's carrier route, plus Claude's names (`claude-*`) aliased to it. */
export function strictRoutes(baseUrl: string): string {
  return `version: 1
providers:
  demo: { plugin: demo }
  deepseek: { plugin: openai-compatible, base_url: "${baseUrl}", api_key_env: DEEPSEEK_API_KEY }
models:
  - { name: demo, provider: demo, model: demo-reasoner }
  - { name: deepseek-reasoner, provider: deepseek, model: deepseek-reasoner }
  - { name: other-reasoner, provider: deepseek, model: deepseek-v4-flash }
  - { name: deepseek-v4-pro, provider: deepseek, model: deepseek-v4-pro }
  - { name: "claude-*", provider: deepseek, model: deepseek-reasoner }
carriers:
  - match: { provider: deepseek }
    fields: [reasoning_content]
    must_echo: true
  - match: {}
    fields: [reasoning_content]
# the emulator is on loopback: spelled as api.deepseek.com's shipped dialect spells it
dialects:
  - match: { provider: deepseek }
    effort: reasoning_effort
    disable: thinking
    developer_role: system
`;
}

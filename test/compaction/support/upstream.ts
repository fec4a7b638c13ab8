import { createHash } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A loopback OpenAI-style upstream for the compaction tests (patterns from
 * test/support/openai-upstream.ts, sized for long histories). The first path
 * segment picks the flavour:
 *
 * - `opaque`: every answer carries a large `reasoning.encrypted` blob in
 *   `reasoning_details` (OpenRouter style); an assistant message it issued
 *   that comes back without exactly that array, byte for byte, gets a 400 —
 *   as a provider that verifies its encrypted reasoning does.
 * - `deepseek`: thinking mode with tools; an assistant tool-call message
 *   without the very `reasoning_content` issued for it gets DeepSeek V4's 400
 *   (https://api-docs.deepseek.com/guides/thinking_mode).
 *
 * Every request is recorded with its raw body, rejected ones included.
 */
export interface CompactionUpstream {
  readonly url: string;
  baseUrl(flavor: "opaque" | "deepseek"): string;
  readonly received: { flavor: string; raw: string; body: WireBody; status: number }[];
  /** What was issued per assistant turn, by its content text or tool-call id. */
  readonly issued: Map<string, Issued>;
  close(): Promise<void>;
}

export interface WireBody {
  model: string;
  messages: WireMessage[];
  tools?: unknown[];
  [key: string]: unknown;
}

export interface WireMessage {
  role: string;
  content?: unknown;
  tool_calls?: { id: string; function: { name: string; arguments: string } }[];
  reasoning_content?: string;
  reasoning_details?: unknown[];
  [key: string]: unknown;
}

export interface Issued {
  readonly reasoning: string;
  readonly details: unknown[] | undefined;
}

export const DEEPSEEK_MUST_ECHO = JSON.stringify({
  error: {
    message: "The `reasoning_content` in the thinking mode must be passed back to the API.",
    type: "invalid_request_error",
    param: null,
    code: "invalid_request_error",
  },
});

export async function startCompactionUpstream(options: { blobBytes: number; reasoningChars: number }): Promise<CompactionUpstream> {
  const received: CompactionUpstream["received"] = [];
  const issued = new Map<string, Issued>();
  let counter = 0;
  const server = createServer((request, response) => {
    let raw = "";
    request.setEncoding("utf8");
    request.on("data", (chunk: string) => (raw += chunk));
    request.on("end", () => {
      const flavor = (request.url ?? "/").split("/")[1] ?? "";
      const body = JSON.parse(raw) as WireBody;
      const record = { flavor, raw, body, status: 200 };
      received.push(record);
      const answer = (status: number, text: string) => {
        record.status = status;
        response.writeHead(status, { "content-type": "application/json" }).end(text);
      };
      const problem = flavor === "deepseek" ? mustEchoProblem(body, issued) : detailsProblem(body, issued);
      if (problem) return answer(400, problem);
      const n = ++counter;
      const message = reply(flavor, body, n, options, issued);
      const whole = {
        id: `chatcmpl-${n}`,
        object: "chat.completion",
        created: 1_700_000_000,
        model: body.model,
        choices: [{ index: 0, message, finish_reason: message.tool_calls ? "tool_calls" : "stop" }],
        usage: { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 },
      };
      // the tests ask non-streamed: compaction happens before the request goes upstream, whatever its stream mode
      answer(200, JSON.stringify(whole));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    baseUrl: (flavor) => `${url}/${flavor}/v1`,
    received,
    issued,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function reply(flavor: string, body: WireBody, n: number, options: { blobBytes: number; reasoningChars: number }, issued: Map<string, Issued>): WireMessage {
  const last = body.messages.at(-1);
  const reasoning = `Thinking ${n}: ${"considering the request carefully. ".repeat(Math.ceil(options.reasoningChars / 34))}`.slice(
    0,
    Math.max(options.reasoningChars, 12),
  );
  if (flavor === "deepseek" && body.tools?.length && last?.role === "user") {
    const id = `call_ds_${n}`;
    issued.set(id, { reasoning, details: undefined });
    return {
      role: "assistant",
      content: null,
      reasoning_content: reasoning,
      tool_calls: [{ id, type: "function", function: { name: "lookup", arguments: `{"n":${n}}` } } as never],
    };
  }
  const content = `Answer ${n} from ${flavor}.`;
  const details =
    flavor === "opaque" ? [{ type: "reasoning.encrypted", data: blob(n, options.blobBytes), format: "openai-responses-v1", index: 0 }] : undefined;
  issued.set(content, { reasoning, details });
  const message: WireMessage = { role: "assistant", content, reasoning_content: reasoning };
  if (details) message.reasoning_details = details;
  return message;
}

/** Deterministic base64 of `bytes` pseudo-random bytes: incompressible, like real ciphertext. */
function blob(n: number, bytes: number): string {
  const parts: Buffer[] = [];
  for (let block = 0; parts.length * 32 < bytes; block++) parts.push(createHash("sha256").update(`${n}:${block}`).digest());
  return Buffer.concat(parts).subarray(0, bytes).toString("base64");
}

function detailsProblem(body: WireBody, issued: Map<string, Issued>): string | undefined {
  for (const [index, message] of body.messages.entries()) {
    if (message.role !== "assistant") continue;
    const expected = issued.get(String(message.content ?? ""));
    if (expected?.details && JSON.stringify(message.reasoning_details) !== JSON.stringify(expected.details)) {
      return JSON.stringify({
        error: {
          message: `messages[${index}]: the encrypted reasoning is missing or was modified`,
          type: "invalid_request_error",
          code: "invalid_encrypted_content",
        },
      });
    }
  }
  return undefined;
}

function mustEchoProblem(body: WireBody, issued: Map<string, Issued>): string | undefined {
  for (const message of body.messages) {
    if (message.role !== "assistant" || !message.tool_calls?.length) continue;
    const expected = issued.get(message.tool_calls[0]!.id);
    if (!expected || message.reasoning_content !== expected.reasoning) return DEEPSEEK_MUST_ECHO;
  }
  return undefined;
}

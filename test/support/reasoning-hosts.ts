import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A loopback emulator of the OpenAI-style hosts whose reasoning rules the
 * shipped routes.yaml encodes for 2026. The first path segment picks the host
 * (`/glm/v1/chat/completions`). Each host renders the history the way its
 * server does: it reads an earlier assistant message's reasoning from one
 * field name only, and keeps the reasoning of turns before the last user
 * message only when its own "preserve" switch is on (otherwise only the
 * current tool loop's reasoning reaches the model). Each answer says which
 * earlier reasoning the model saw (`seen` on each recorded request, and the
 * final text), so a test sees a wrong field name or a missing switch as
 * forgotten reasoning rather than as a silent pass.
 *
 * Sources, host by host (the field read, the switch, and any error text):
 * - kimi-k2.6: `reasoning_content`; `thinking.keep: "all"` keeps earlier turns
 *   ("null (default, not kept) / \"all\" (enables it)"),
 *   https://platform.kimi.ai/docs/guide/use-kimi-k2-thinking-model. A tool-call
 *   turn without its reasoning is refused with the text carrierd's DeepSeek-like
 *   emulator uses for Kimi (test/support/openai-upstream.ts).
 * - glm (Z.ai GLM-4.7 / GLM-5): `reasoning_content`; `thinking.clear_thinking: false`
 *   is "Preserved Thinking", https://docs.z.ai/guides/capabilities/thinking-mode.
 *   No error text: GLM silently drops what it does not keep.
 * - qwen3.6 (DashScope): `reasoning_content`; `preserve_thinking: true` keeps
 *   earlier turns (the chat template renders reasoning only after the last user
 *   query otherwise), https://huggingface.co/Qwen/Qwen3.6-35B-A3B. No error text.
 * - fireworks: `reasoning_content`; `reasoning_history`: `disabled` | `interleaved`
 *   (the default here: the current tool loop only) | `preserved`
 *   (https://docs.fireworks.ai/guides/reasoning; the names as Fireworks defines
 *   them, https://github.com/vercel/ai/blob/main/packages/fireworks/CHANGELOG.md,
 *   release 1.0.50). Its message schema forbids unknown keys: "Extra inputs are
 *   not permitted" (the same changelog entry quotes it).
 * - vllm: `reasoning` (https://github.com/vllm-project/vllm/pull/27752; the old
 *   name removed by https://github.com/vllm-project/vllm/pull/33402); vllm-legacy:
 *   `reasoning_content`. sglang and llamacpp: `reasoning_content`
 *   (https://docs.sglang.ai/advanced_features/separate_reasoning.html,
 *   https://github.com/ggml-org/llama.cpp/blob/master/tools/server/README.md).
 *   ollama (`/v1`): `reasoning`, mapped to its native thinking
 *   (https://github.com/ollama/ollama/blob/main/openai/openai.go). Local servers
 *   keep what their template renders; they refuse nothing, so no error text.
 * - minimax (M2.x): with `reasoning_split: true` the reasoning comes as
 *   `reasoning_details` (`reasoning.text`, format `MiniMax-response-v1`), without
 *   it inline as `<think>…</think>` in the content; earlier reasoning is read
 *   back from `reasoning_details` ("MiniMax highly recommends preserving
 *   reasoning between turns", https://openrouter.ai/minimax/minimax-m2; the
 *   switch, https://platform.minimax.io/docs/guides/text-m2-function-call). No
 *   error text: what is not sent back is forgotten.
 * Any host: a `native_record` key is a leak of carrierd's own and answers 400.
 */

export type Host = "minimax" | "kimi-k2.6" | "glm" | "qwen3.6" | "fireworks" | "vllm" | "vllm-legacy" | "sglang" | "llamacpp" | "ollama";

interface HostRule {
  /** The one message field the host reads an earlier turn's reasoning from, and answers its own in. */
  readonly field: "reasoning_content" | "reasoning" | "reasoning_details";
  /** Whether the request asks the host to keep reasoning from before the last user message. */
  readonly keepsAll: (body: RequestBody) => boolean;
  /** Whether an earlier turn's reasoning is dropped altogether (Fireworks `reasoning_history: disabled`). */
  readonly keepsNone?: (body: RequestBody) => boolean;
  readonly mustEcho?: (index: number) => string;
  /** The only keys an assistant message may carry; unknown keys are refused with this body. */
  readonly schema?: { keys: readonly string[]; reject: (index: number, key: string) => string };
}

type RequestBody = { model: string; messages: Record<string, unknown>[]; stream?: boolean; tools?: unknown[]; [key: string]: unknown };
const object = (value: unknown): Record<string, unknown> => (value && typeof value === "object" ? (value as Record<string, unknown>) : {});

export const HOSTS: Record<Host, HostRule> = {
  minimax: { field: "reasoning_details", keepsAll: () => true },
  "kimi-k2.6": {
    field: "reasoning_content",
    keepsAll: (body) => object(body.thinking).keep === "all",
    mustEcho: (index) =>
      JSON.stringify({
        error: {
          message: `thinking is enabled but reasoning_content is missing in assistant tool call message at index ${index}`,
          type: "invalid_request_error",
        },
      }),
  },
  glm: { field: "reasoning_content", keepsAll: (body) => object(body.thinking).clear_thinking === false },
  "qwen3.6": { field: "reasoning_content", keepsAll: (body) => body.preserve_thinking === true },
  fireworks: {
    field: "reasoning_content",
    keepsAll: (body) => body.reasoning_history === "preserved",
    keepsNone: (body) => body.reasoning_history === "disabled",
    schema: {
      keys: ["role", "content", "tool_calls", "name", "reasoning_content"],
      reject: (index, key) =>
        JSON.stringify({
          error: { object: "error", type: "invalid_request_error", message: `Extra inputs are not permitted, field: 'messages[${index}].${key}'` },
        }),
    },
  },
  vllm: { field: "reasoning", keepsAll: () => true },
  "vllm-legacy": { field: "reasoning_content", keepsAll: () => true },
  sglang: { field: "reasoning_content", keepsAll: () => true },
  llamacpp: { field: "reasoning_content", keepsAll: () => true },
  ollama: { field: "reasoning", keepsAll: () => true },
};

export interface HostRequest {
  readonly host: string;
  readonly body: RequestBody;
  status: number;
  /** The earlier reasoning texts the model saw, in order. */
  seen: string[];
}

export interface HostsEmulator {
  readonly url: string;
  baseUrl(host: Host): string;
  readonly received: HostRequest[];
  /** Every reasoning text the host issued so far, in order. */
  issued(host: Host): string[];
  close(): Promise<void>;
}

export async function startReasoningHosts(): Promise<HostsEmulator> {
  const received: HostRequest[] = [];
  const issued = new Map<string, string[]>();
  const byCall = new Map<string, string>(); // tool-call id → the reasoning issued with it
  let counter = 0;
  const server = createServer((request, response) => {
    let raw = "";
    request.setEncoding("utf8");
    request.on("data", (chunk: string) => (raw += chunk));
    request.on("end", () => {
      const host = (request.url ?? "/").split("/")[1] ?? "";
      const rule = HOSTS[host as Host];
      const body = JSON.parse(raw) as RequestBody;
      const record: HostRequest = { host, body, status: 200, seen: [] };
      received.push(record);
      const refuse = (status: number, text: string) => {
        record.status = status;
        response.writeHead(status, { "content-type": "application/json" }).end(text);
      };
      if (!rule) return refuse(404, JSON.stringify({ error: { message: `no such host: ${host}` } }));
      const problem = check(rule, body, byCall);
      if (problem) return refuse(400, problem);
      record.seen = seenReasoning(rule, body);
      const n = ++counter;
      const reasoning = `Thought ${n} on ${host}.`;
      (issued.get(host) ?? issued.set(host, []).get(host)!).push(reasoning);
      const last = body.messages.at(-1);
      const call =
        (body.tools?.length ?? 0) > 0 && last?.role === "user" ? { id: `call_${host}_${n}`, name: "weather", arguments: `{"city":"Florence"}` } : undefined;
      if (call) byCall.set(call.id, reasoning);
      const content = call ? null : `I remember: ${record.seen.join(" | ") || "nothing"}`;
      if (body.stream) streamAnswer(response, answerIn(rule, body), body.model, reasoning, content, call);
      else
        response.writeHead(200, { "content-type": "application/json" }).end(
          JSON.stringify({
            id: `chatcmpl-${n}`,
            object: "chat.completion",
            created: 1_700_000_000,
            model: body.model,
            choices: [{ index: 0, message: message(answerIn(rule, body), reasoning, content, call), finish_reason: call ? "tool_calls" : "stop" }],
            usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
          }),
        );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    baseUrl: (host) => `${url}/${host}/v1`,
    received,
    issued: (host) => issued.get(host) ?? [],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function check(rule: HostRule, body: RequestBody, byCall: Map<string, string>): string | undefined {
  for (const [index, message] of body.messages.entries()) {
    if ("native_record" in message) return JSON.stringify({ error: { message: `messages[${index}].native_record: Extra inputs are not permitted` } });
    if (message.role !== "assistant") continue;
    const unknown = rule.schema && Object.keys(message).find((key) => !rule.schema!.keys.includes(key));
    if (unknown) return rule.schema!.reject(index, unknown);
    const calls = (message.tool_calls as { id: string }[] | undefined) ?? [];
    if (rule.mustEcho && calls.length > 0) {
      const sent = message[rule.field];
      const expected = byCall.get(calls[0]!.id);
      if (typeof sent !== "string" || sent === "" || (expected !== undefined && sent !== expected)) return rule.mustEcho(index);
    }
  }
  return undefined;
}

/** The earlier reasoning the host's template renders: from its one field, all turns or only those after the last user message. */
function seenReasoning(rule: HostRule, body: RequestBody): string[] {
  if (rule.keepsNone?.(body)) return [];
  const lastUser = body.messages.findLastIndex((message) => message.role === "user");
  const keepAll = rule.keepsAll(body);
  return body.messages.flatMap((message, index) => {
    const text = rule.field === "reasoning_details" ? (detailsText(message.reasoning_details) ?? inlineText(message.content)) : message[rule.field];
    return message.role === "assistant" && typeof text === "string" && text.trim() !== "" && (keepAll || index > lastUser) ? [text] : [];
  });
}

function detailsText(details: unknown): string | undefined {
  if (!Array.isArray(details)) return undefined;
  return (details as { type?: string; text?: unknown }[])
    .map((detail) => (detail.type === "reasoning.text" && typeof detail.text === "string" ? detail.text : ""))
    .join("");
}

/** Reasoning left inline in the content, as MiniMax writes it without `reasoning_split` (and reads it back). */
function inlineText(content: unknown): string | undefined {
  return typeof content === "string" ? /<think>\n?([\s\S]*?)\n?<\/think>/.exec(content)?.[1] : undefined;
}

type Call = { id: string; name: string; arguments: string };

/** Where an answer's reasoning goes: a message field, MiniMax's split-out details, or `<think>` inline in the content. */
type AnswerIn = "reasoning_content" | "reasoning" | "details" | "inline";

function answerIn(rule: HostRule, body: RequestBody): AnswerIn {
  if (rule.field !== "reasoning_details") return rule.field;
  return body.reasoning_split === true ? "details" : "inline";
}

/** The reasoning as the host writes it in one message or delta; MiniMax's detail shape as its docs show it. */
function reasoningPart(where: AnswerIn, text: string): Record<string, unknown> {
  if (where === "details") return { reasoning_details: [{ type: "reasoning.text", id: "reasoning-text-1", format: "MiniMax-response-v1", index: 0, text }] };
  if (where === "inline") return { content: text };
  return { [where]: text };
}

function message(where: AnswerIn, reasoning: string, content: string | null, call: Call | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = { role: "assistant", content, ...reasoningPart(where, reasoning) };
  if (where === "inline") out.content = `<think>\n${reasoning}\n</think>\n\n${content ?? ""}`;
  if (call) out.tool_calls = [{ id: call.id, type: "function", function: { name: call.name, arguments: call.arguments } }];
  return out;
}

function streamAnswer(response: ServerResponse, where: AnswerIn, model: string, reasoning: string, content: string | null, call: Call | undefined): void {
  response.writeHead(200, { "content-type": "text/event-stream" });
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: "chatcmpl-stream", object: "chat.completion.chunk", created: 1_700_000_000, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const text = where === "inline" ? `<think>\n${reasoning}\n</think>\n\n` : reasoning;
  const half = Math.ceil(text.length / 2);
  const out = [chunk({ role: "assistant", content: "" }), chunk(reasoningPart(where, text.slice(0, half))), chunk(reasoningPart(where, text.slice(half)))];
  if (content) out.push(chunk({ content }));
  if (call) {
    out.push(chunk({ tool_calls: [{ index: 0, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] }));
    out.push(chunk({ tool_calls: [{ index: 0, function: { arguments: call.arguments } }] }));
  }
  out.push(chunk({}, call ? "tool_calls" : "stop"), "data: [DONE]\n\n");
  response.end(out.join(""));
}

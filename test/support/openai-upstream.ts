import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A loopback emulator of the OpenAI-style providers carrierd routes to. The
 * first path segment picks the provider flavour (`/deepseek/v1/chat/completions`),
 * so one server stands in for all of them. Each flavour answers in its own
 * reasoning field and enforces what the real API enforces, with the exact
 * error bodies as the providers send them:
 *
 * - deepseek, kimi, mimo: 400 when an assistant tool-call turn lacks its
 *   `reasoning_content` — or carries anything but the reasoning issued for it
 *   (a `" "` placeholder is accepted only for turns it issued none for).
 * - mistral: 422 `extra_forbidden` for any assistant key outside its schema.
 * - groq, cerebras: 400 "property '…' is unsupported"; both read `reasoning`.
 * - fireworks: `additionalProperties: false` schema that lists `reasoning_content`.
 * - openrouter, novita: `reasoning_details` must come back exactly as issued.
 * - local (Ollama / vLLM style): lenient, ignores what it does not know.
 * - any flavour: a `native_record` key is a leak and answers 400.
 *
 * Custom strict flavours (`strict`) reject one field with a given phrasing.
 * Every request is recorded, rejected ones included.
 */

export type Flavor = "deepseek" | "kimi" | "mimo" | "zai" | "mistral" | "groq" | "cerebras" | "fireworks" | "openrouter" | "novita" | "local";

export interface ReceivedRequest {
  readonly flavor: string;
  readonly body: { model: string; messages: Record<string, unknown>[]; stream?: boolean; [key: string]: unknown };
  readonly raw: string;
  readonly headers: IncomingHttpHeaders;
  /** The status the emulator answered with. */
  status: number;
}

/** A strict flavour that refuses `fields` on assistant messages with a provider's phrasing. */
export interface StrictProfile {
  readonly fields: readonly string[];
  readonly status: number;
  /** The error body for the first offending (message index, field). */
  body(index: number, field: string): string;
  /** Answered to a request with history but none of `fields`: an upstream that keeps failing after the retry. */
  readonly thenError?: FixedError;
  /** The model names it serves, checked after the fields (Groq's 404 `model_not_found` for any other); default: every name. */
  readonly serves?: readonly string[];
}

/** A scripted error answered whatever the request holds (look-alike errors, outages). */
export interface FixedError {
  readonly status: number;
  readonly body: string;
}

export interface UpstreamOptions {
  strict?: Record<string, StrictProfile>;
  fixedErrors?: Record<string, FixedError>;
  /** The id of the n-th tool call a flavour issues; default `call_<flavor>_<n>`. */
  callId?: (flavor: string, n: number) => string;
  /** How a host says it served each answer, as OpenAI does on every answer and chunk (`service_tier`, `system_fingerprint`); none by default. */
  served?: { readonly service_tier?: string; readonly system_fingerprint?: string };
}

export interface OpenAIUpstream {
  readonly url: string;
  baseUrl(flavor: string): string;
  readonly received: ReceivedRequest[];
  requestsFor(flavor: string): ReceivedRequest[];
  close(): Promise<void>;
}

interface Issued {
  reasoning: string;
  details: unknown[] | undefined;
  opaque?: string | number;
}

const MUST_ECHO: Record<string, (index: number) => string> = {
  deepseek: () =>
    JSON.stringify({
      error: {
        message: "The `reasoning_content` in the thinking mode must be passed back to the API.",
        type: "invalid_request_error",
        param: null,
        code: "invalid_request_error",
      },
    }),
  kimi: (index) =>
    JSON.stringify({
      error: {
        message: `thinking is enabled but reasoning_content is missing in assistant tool call message at index ${index}`,
        type: "invalid_request_error",
      },
    }),
  mimo: () =>
    JSON.stringify({
      error: { code: "400", message: "Param Incorrect", param: "The reasoning_content in the thinking mode must be passed back to the API.", type: "" },
    }),
};

const BASE_ASSISTANT_KEYS = ["role", "content", "tool_calls", "name"];
const SCHEMAS: Record<string, { keys: string[]; reject(violations: { index: number; key: string }[]): { status: number; body: string } }> = {
  mistral: {
    keys: ["role", "content", "tool_calls", "prefix"],
    reject: (violations) => ({
      status: 422,
      body: JSON.stringify({
        object: "error",
        message: {
          detail: violations.map(({ index, key }) => ({
            type: "extra_forbidden",
            loc: ["body", "messages", index, "assistant", key],
            msg: "Extra inputs are not permitted",
            input: "",
            url: "https://errors.pydantic.dev/2.6/v/extra_forbidden",
          })),
        },
        type: "invalid_request_error",
        param: null,
        code: null,
      }),
    }),
  },
  groq: {
    keys: [...BASE_ASSISTANT_KEYS, "reasoning"],
    reject: ([first]) => ({
      status: 400,
      body: JSON.stringify({
        error: {
          message: `'messages.${first!.index}' : for 'role:assistant' the following must be satisfied[('messages.${first!.index}' : property '${first!.key}' is unsupported)]`,
          type: "invalid_request_error",
        },
      }),
    }),
  },
  cerebras: {
    keys: [...BASE_ASSISTANT_KEYS, "reasoning"],
    reject: (violations) => ({
      status: 400,
      body: JSON.stringify({
        message: violations
          .map(({ index, key }) => `messages.${index}.assistant.${key}: property 'messages.${index}.assistant.${key}' is unsupported`)
          .join("\n"),
        type: "invalid_request_error",
        param: "validation_error",
        code: "wrong_api_format",
      }),
    }),
  },
  fireworks: {
    keys: [...BASE_ASSISTANT_KEYS, "reasoning_content"],
    reject: ([first]) => ({
      status: 400,
      body: JSON.stringify({
        error: { object: "error", type: "invalid_request_error", message: `Extra inputs are not permitted, field: 'messages[${first!.index}].${first!.key}'` },
      }),
    }),
  },
};

/** Which field each flavour answers its reasoning in. */
const REPLY_FIELDS: Record<string, { text: string[]; details: boolean }> = {
  deepseek: { text: ["reasoning_content"], details: false },
  kimi: { text: ["reasoning_content"], details: false },
  mimo: { text: ["reasoning_content"], details: false },
  zai: { text: ["reasoning_content"], details: false },
  fireworks: { text: ["reasoning_content"], details: false },
  novita: { text: ["reasoning_content"], details: true },
  openrouter: { text: ["reasoning"], details: true },
  groq: { text: ["reasoning"], details: false },
  cerebras: { text: ["reasoning"], details: false },
  local: { text: ["reasoning"], details: false },
  mistral: { text: [], details: false },
  copilot: { text: ["reasoning_text"], details: false },
  copilotbad: { text: ["reasoning_text"], details: false },
};

/** Custom (strict / fixed-error) flavours answer like an OpenRouter-format gateway: plain text and details. */
const DEFAULT_REPLY = { text: ["reasoning_content"], details: true };

export async function startOpenAIUpstream(options: UpstreamOptions = {}): Promise<OpenAIUpstream> {
  const received: ReceivedRequest[] = [];
  const issued = new Map<string, Issued>(); // by tool-call id, or by content for text turns
  let counter = 0;

  const server = createServer((request, response) => {
    let raw = "";
    request.setEncoding("utf8");
    request.on("data", (chunk: string) => (raw += chunk));
    request.on("end", () => {
      const flavor = (request.url ?? "/").split("/")[1] ?? "";
      const body = JSON.parse(raw) as ReceivedRequest["body"];
      const record: ReceivedRequest = { flavor, body, raw, headers: request.headers, status: 200 };
      received.push(record);
      const answer = (status: number, text: string) => {
        record.status = status;
        response.writeHead(status, { "content-type": "application/json" }).end(text);
      };
      const fixed = options.fixedErrors?.[flavor];
      if (fixed) return answer(fixed.status, fixed.body);
      const problem = validate(flavor, body, issued, options.strict?.[flavor]);
      if (problem) return answer(problem.status, problem.body);
      const reply = scriptReply(flavor, body, ++counter, options.callId);
      if (flavor === "copilot") reply.opaque = `opaque-${counter}-Zm9v/+==`;
      if (flavor === "copilotbad") reply.opaque = counter;
      remember(issued, reply);
      if (body.stream) streamReply(response, flavor, body.model, reply, options.served);
      else answer(200, JSON.stringify(wholeReply(flavor, body.model, reply, options.served)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    baseUrl: (flavor) => `${url}/${flavor}/v1`,
    received,
    requestsFor: (flavor) => received.filter((request) => request.flavor === flavor),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function validate(
  flavor: string,
  body: ReceivedRequest["body"],
  issued: Map<string, Issued>,
  strict: StrictProfile | undefined,
): { status: number; body: string } | undefined {
  const messages = body.messages ?? [];
  for (const [index, message] of messages.entries()) {
    if ("native_record" in message)
      return {
        status: 400,
        body: JSON.stringify({ error: { message: `messages[${index}].native_record: Extra inputs are not permitted`, type: "invalid_request_error" } }),
      };
  }
  if (strict) {
    for (const [index, message] of messages.entries()) {
      if (message.role !== "assistant") continue;
      const field = strict.fields.find((name) => name in message);
      if (field) return { status: strict.status, body: strict.body(index, field) };
    }
    if (strict.thenError && messages.some((message) => message.role === "assistant")) return strict.thenError;
    if (strict.serves && !strict.serves.includes(body.model))
      return {
        status: 404,
        body: JSON.stringify({
          error: {
            message: `The model \`${body.model}\` does not exist or you do not have access to it.`,
            type: "invalid_request_error",
            code: "model_not_found",
          },
        }),
      };
  }
  const schema = SCHEMAS[flavor];
  if (schema) {
    const violations = messages.flatMap((message, index) =>
      message.role === "assistant"
        ? Object.keys(message)
            .filter((key) => !schema.keys.includes(key))
            .map((key) => ({ index, key }))
        : [],
    );
    if (violations.length > 0) return schema.reject(violations);
  }
  const mustEcho = MUST_ECHO[flavor];
  if (mustEcho) {
    for (const [index, message] of messages.entries()) {
      const calls = message.tool_calls as { id: string }[] | undefined;
      if (message.role !== "assistant" || !calls?.length) continue;
      const sent = message.reasoning_content;
      const expected = calls.map((call) => issued.get(call.id)).find(Boolean)?.reasoning;
      // DeepSeek V4 rejects "" too; " " stands in only where this provider issued no reasoning
      const ok = typeof sent === "string" && sent !== "" && (expected === undefined ? true : sent === expected);
      if (!ok) return { status: 400, body: mustEcho(index) };
    }
  }
  if (flavor === "copilot") {
    // like Copilot and Gemini signatures: a tool-call turn must come back with the opaque state issued for it
    for (const [index, message] of messages.entries()) {
      const calls = message.tool_calls as { id: string }[] | undefined;
      const expected = calls?.length ? issued.get(calls[0]!.id)?.opaque : undefined;
      if (expected !== undefined && message.reasoning_opaque !== expected) {
        return {
          status: 400,
          body: JSON.stringify({ error: { message: `messages[${index}]: reasoning_opaque is missing or was modified`, type: "invalid_request_error" } }),
        };
      }
    }
  }
  if (flavor === "openrouter" || flavor === "novita") {
    for (const message of messages) {
      if (message.role !== "assistant" || message.reasoning_details === undefined) continue;
      const calls = (message.tool_calls as { id: string }[] | undefined) ?? [];
      const expected = (calls.length > 0 ? issued.get(calls[0]!.id) : issued.get(`text:${String(message.content ?? "")}`))?.details;
      if (expected && JSON.stringify(message.reasoning_details) !== JSON.stringify(expected)) {
        return {
          status: 400,
          body: JSON.stringify({
            error: {
              message: "Provider returned error",
              code: 400,
              metadata: {
                raw: JSON.stringify({
                  type: "error",
                  error: { type: "invalid_request_error", message: "messages.1.content.0: Invalid `signature` in `thinking` block" },
                }),
                provider_name: "Anthropic",
              },
            },
          }),
        };
      }
    }
  }
  return undefined;
}

interface Reply {
  /** Copilot-style encrypted state; a number for `copilotbad`, which breaks its plugin's schema. */
  opaque?: string | number;
  reasoning: string;
  content: string;
  toolCalls: { id: string; name: string; arguments: string }[];
  details: Record<string, unknown>[] | undefined;
}

/** Offered tools and a user turn → a tool call; a tool result → the answer. Deterministic per request number. */
function scriptReply(flavor: string, body: ReceivedRequest["body"], n: number, callId = (name: string, index: number) => `call_${name}_${index}`): Reply {
  const last = body.messages.at(-1);
  const tools = (body.tools as { function: { name: string } }[] | undefined) ?? [];
  const reasoning = `Step ${n}: the ${flavor} model thinks about "${String(last?.content ?? "").slice(0, 40)}".`;
  const details = (REPLY_FIELDS[flavor] ?? DEFAULT_REPLY).details
    ? [
        {
          type: "reasoning.text",
          text: reasoning,
          format: "anthropic-claude-v1",
          index: 0,
          signature: `sig-${flavor}-${n}-${Buffer.from(reasoning).toString("base64")}`,
        },
        { type: "reasoning.encrypted", data: `enc-${n}-AAEC/+8=`, format: "anthropic-claude-v1", index: 1 },
      ]
    : undefined;
  if (tools.length > 0 && last?.role === "user") {
    return {
      reasoning,
      content: "",
      toolCalls: [{ id: callId(flavor, n), name: tools[0]!.function.name, arguments: `{"city": "Florence", "n": ${n}}` }],
      details,
    };
  }
  return { reasoning, content: `Answer ${n} from ${flavor}.`, toolCalls: [], details };
}

function remember(issued: Map<string, Issued>, reply: Reply): void {
  const entry = { reasoning: reply.reasoning, details: reply.details, opaque: reply.opaque };
  if (reply.toolCalls.length > 0) for (const call of reply.toolCalls) issued.set(call.id, entry);
  else issued.set(`text:${reply.content}`, entry);
}

function messageOf(flavor: string, reply: Reply): Record<string, unknown> {
  const message: Record<string, unknown> = { role: "assistant", content: reply.toolCalls.length > 0 ? null : reply.content };
  if (flavor === "mistral")
    message.content = [
      { type: "thinking", thinking: [{ type: "text", text: reply.reasoning }] },
      { type: "text", text: reply.content },
    ];
  for (const field of (REPLY_FIELDS[flavor] ?? DEFAULT_REPLY).text) message[field] = reply.reasoning;
  if (reply.details) message.reasoning_details = reply.details;
  if (reply.opaque !== undefined) message.reasoning_opaque = reply.opaque;
  if (reply.toolCalls.length > 0)
    message.tool_calls = reply.toolCalls.map((call) => ({ id: call.id, type: "function", function: { name: call.name, arguments: call.arguments } }));
  return message;
}

function wholeReply(flavor: string, model: string, reply: Reply, served: UpstreamOptions["served"]): object {
  return {
    id: `chatcmpl-${flavor}`,
    object: "chat.completion",
    created: 1_700_000_000,
    model,
    ...served,
    choices: [{ index: 0, message: messageOf(flavor, reply), finish_reason: reply.toolCalls.length > 0 ? "tool_calls" : "stop" }],
    usage: { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30, completion_tokens_details: { reasoning_tokens: 12 } },
  };
}

/** Streams the reply the way the provider does: reasoning in fragments, details fragments merged by index downstream. */
function streamReply(response: import("node:http").ServerResponse, flavor: string, model: string, reply: Reply, served: UpstreamOptions["served"]): void {
  response.writeHead(200, { "content-type": "text/event-stream" });
  const chunk = (delta: Record<string, unknown>, finish: string | null = null, usage?: object) =>
    `data: ${JSON.stringify({ id: `chatcmpl-${flavor}`, object: "chat.completion.chunk", created: 1_700_000_000, model, ...served, choices: [{ index: 0, delta, finish_reason: finish }], ...(usage ? { usage } : {}) })}\n\n`;
  const out: string[] = [chunk({ role: "assistant", content: "" })];
  const half = Math.ceil(reply.reasoning.length / 2);
  for (const piece of [reply.reasoning.slice(0, half), reply.reasoning.slice(half)]) {
    const delta: Record<string, unknown> = {};
    if (flavor === "mistral") delta.content = [{ type: "thinking", thinking: [{ type: "text", text: piece }] }];
    for (const field of (REPLY_FIELDS[flavor] ?? DEFAULT_REPLY).text) delta[field] = piece;
    out.push(chunk(delta));
  }
  if (reply.details) {
    // text in two fragments, then the signature alone with no text (as OpenRouter streams Claude), then the encrypted item whole
    const [text, encrypted] = reply.details as [Record<string, unknown>, Record<string, unknown>];
    const body = String(text.text);
    const { signature, ...unsigned } = text;
    out.push(chunk({ reasoning_details: [{ ...unsigned, text: body.slice(0, 5) }] }));
    out.push(chunk({ reasoning_details: [{ ...unsigned, text: body.slice(5) }] }));
    out.push(chunk({ reasoning_details: [{ type: text.type, signature, format: text.format, index: text.index }] }));
    out.push(chunk({ reasoning_details: [encrypted] }));
  }
  if (typeof reply.opaque === "string") {
    // Copilot may split one opaque across chunks: the plugin concatenates
    const cut = Math.floor(reply.opaque.length / 2);
    out.push(chunk({ reasoning_opaque: reply.opaque.slice(0, cut) }), chunk({ reasoning_opaque: reply.opaque.slice(cut) }));
  } else if (reply.opaque !== undefined) out.push(chunk({ reasoning_opaque: reply.opaque }));
  if (reply.content) out.push(chunk({ content: reply.content }));
  reply.toolCalls.forEach((call, index) => {
    out.push(chunk({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] }));
    out.push(chunk({ tool_calls: [{ index, function: { arguments: call.arguments } }] }));
  });
  out.push(chunk({}, reply.toolCalls.length > 0 ? "tool_calls" : "stop", { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 }));
  out.push("data: [DONE]\n\n");
  for (const piece of out) response.write(piece);
  response.end();
}

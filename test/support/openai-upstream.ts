import { createHash, createHmac, randomBytes, randomUUID } from "node:crypto";
import { EventEmitter } from "node:events";
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { parse } from "yaml";
import { fixtureJson, fixtureLines, readFixture } from "./fixtures-dir.js";
import type { Hold } from "./hold.js";

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
 * - openrouter: `reasoning_details` in the shape of the model's family
 *   (`anthropic/…`, `openai/…`, `google/…`; Claude's for any other), refused
 *   in OpenRouter's wrapper with that family's text when its own come back
 *   changed, or missing from the current tool loop.
 * - novita: `reasoning_details` must come back exactly as issued.
 * - sealed: a provider that verifies its encrypted reasoning: every answer
 *   carries one `reasoning.encrypted` item of `blobBytes` incompressible
 *   bytes, and a turn it answered that comes back without exactly that array
 *   is OpenAI's 400 `invalid_encrypted_content` (the text as
 *   test/support/openai-responses-upstream.ts quotes it).
 * - copilot (GitHub Copilot's chat API): `reasoning_text` plus a
 *   `reasoning_opaque` which, streamed, is split in two fragments carried on
 *   the tool-call chunks — only a client that concatenates them holds the real
 *   value. A tool-call turn must come back with exactly the opaque issued for
 *   it; `reasoning_text` without `reasoning_opaque`, or a key Copilot does not
 *   know (top level or on an assistant turn), is a 400 in Copilot's phrasing.
 *   `copilotbad` is the same with a number for the opaque, which breaks the
 *   schema of the plugin that keeps it.
 * - local (Ollama / vLLM style): lenient, ignores what it does not know;
 *   `vllm` and `ollama` are the same server under their own names.
 * - compatible: as lenient, answering in `reasoning_content` (SGLang / llama.cpp
 *   style); `vllm-legacy`, `sglang` and `llamacpp` are it under their own names.
 * - minimax: with `reasoning_split: true` its reasoning comes as
 *   `reasoning_details` (`reasoning.text`, format `MiniMax-response-v1`),
 *   without it inline as `<think>…</think>` in the content.
 * - dashscope (Qwen): `reasoning_content`; zai is GLM.
 * - what the model saw: for the hosts whose reasoning rules the shipped
 *   routes.yaml encodes (kimi, zai, dashscope, fireworks, minimax and the
 *   local servers), each request records the earlier reasoning the host's
 *   template renders (`seen`): read from its one field only, and from turns
 *   before the last user message only when its preserve switch is on — so a
 *   wrong field name or a missing switch shows as forgotten reasoning.
 * - gemini: Gemini 3 through Google's OpenAI-compatible endpoint
 *   (`/gemini/v1beta/openai/chat/completions`, https://ai.google.dev/gemini-api/docs/openai):
 *   its API key (`apiKeys`), no field it does not know, a thought signature
 *   on the first call of each step of the current turn; its errors are a
 *   JSON array around one error object (`geminiProblem` below).
 * - any other flavour: a `native_record` key is a leak and answers 400.
 * - recorded answers: `logprobs: true` and a `service_tier` are served as OpenAI serves them.
 *
 * Custom strict flavours (`strict`, named unlike any built-in one) reject one
 * field with a given phrasing. Every request is recorded, rejected ones included.
 *
 * What the model answers is `answers` (see `Answers`): a scripted reply per
 * flavour (the default); recorded real traffic (DeepSeek's `recorded`, any
 * recording by model name in `replay`, a go-vcr `cassette`); a DeepSeek that
 * calls the tool a plan picks (`planned`); an agent's file-reading tool loop
 * (`tool-loop`); numbered chat turns; Gemini's parallel-call `steps`; or
 * carriers that come after the text (`late-carriers`). `echo` sets how
 * strictly the must-echo rule above is kept; the delays and `hold` keep an
 * answer before its first byte, its late carriers or its finish.
 * `startDeepSeek` is the same emulator seen as one DeepSeek endpoint.
 */

export type Flavor =
  | "gemini"
  | "deepseek"
  | "kimi"
  | "mimo"
  | "zai"
  | "dashscope"
  | "minimax"
  | "mistral"
  | "groq"
  | "cerebras"
  | "fireworks"
  | "openrouter"
  | "novita"
  | "sealed"
  | "local"
  | "vllm"
  | "ollama"
  | "compatible"
  | "vllm-legacy"
  | "sglang"
  | "llamacpp";

export interface ChatMessage {
  role: string;
  content?: unknown;
  reasoning_content?: unknown;
  tool_calls?: { id: string; type?: string; function: { name: string; arguments: string } }[];
  [key: string]: unknown;
}

export interface ChatBody {
  model: string;
  messages: ChatMessage[];
  stream?: boolean;
  tools?: { type: string; function?: { name: string; description?: string; parameters?: { required?: string[] } } }[];
  [key: string]: unknown;
}

export interface ReceivedRequest {
  readonly flavor: string;
  readonly body: ChatBody;
  readonly raw: string;
  readonly headers: IncomingHttpHeaders;
  /** The status the emulator answered with. */
  status: number;
  /** What it answered: a tool call, a final answer (after tools were offered), a plain answer to a request without tools, or a refusal. */
  answer?: "tool_call" | "final" | "plain" | "rejected";
  /** The tool a tool-call answer called. */
  tool?: string;
  /** Why a request was refused, in words (the body is the provider's). */
  reason?: string;
  /** How many earlier tool-call turns the request sent back. */
  readonly resentToolTurns: number;
  /** A recorded answer's body as it was sent (`recorded` answers). */
  answered?: string;
  /** The reasoning this request's answer issued. */
  reasoning?: string;
  /** The earlier reasoning texts the host's template rendered for the model, in order (the hosts of `TEMPLATES`). */
  seen?: string[];
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

/** What the model does with a request that offers tools and does not end in a tool result: call this tool with these arguments. */
export type ToolPlan = (tools: string[], lastUserText: string) => { name: string; arguments: Record<string, unknown> } | undefined;

/** A file the model reads through the client's tool, and the words that prove it was read. */
export interface FixtureFile {
  /** Absolute path. */
  readonly path: string;
  /** A word that is in the file and in no prompt: the final answer quotes it only after a tool result carried it. */
  readonly marker: string;
}

/** What `replay` answers one model with. */
export type Replay =
  /** A recording: path under fixtures/chunks without extension (`deepseek/deepseek-reasoning`). */
  | { readonly name: string }
  /** A recorded upstream error: `status` and the body of a file under fixtures/chunks (`openai/openai-error.1.json`). */
  | { readonly status: number; readonly file: string }
  /** A stream spelled out in the test (for shapes no recording has), and the body a non-stream request gets instead. */
  | { readonly chunks: readonly string[]; readonly whole?: unknown }
  /** A stream that never ends: `endless` every 10 ms until the gateway hangs up. */
  | { readonly endless: string };

/**
 * What the model answers.
 * - `scripted`: a tool call to the first offered tool after a user turn, else
 *   a text answer, in the flavour's own reasoning fields (with
 *   `reasoning_details` and opaque state where the flavour has them).
 * - `recorded`: DeepSeek's recorded real streams (test/fixtures/chunks): the
 *   tool-call recording, calling `callName` or the first offered function,
 *   when tools are offered and no tool result is last, else the reasoning
 *   one; Groq's, Mistral's and Alibaba's recordings for their model names. A
 *   last user message with FAIL_400 gets DeepSeek's 400, FAIL_MID_STREAM half
 *   the stream and a dropped connection, FINISH_LENGTH `finish_reason: "length"`.
 * - `planned`: DeepSeek in thinking mode: fresh reasoning every turn, the tool
 *   `plan` picks (the first offered, by default), after a tool result what the
 *   tool said; streamed in token-sized fragments with DeepSeek's cache usage.
 * - `tool-loop`: an agent's tool loop: it reads `files`, one per turn, with the
 *   reading tool (or shell) the client offers, then answers with their markers.
 * - `cassette`: the n-th request gets the n-th recorded response of a go-vcr
 *   cassette (`loadCassette`), byte for byte, with its status and content type.
 * - `numbered`: a chat turn, never a tool call: "Thinking n about <the last
 *   message>." and "Answer n.", n counting the answers.
 * - `replay`: the request's model picks what is served (`models`): a
 *   recording under test/fixtures/chunks (its chunks one network write each,
 *   so the gateway's SSE parser sees real framing boundaries, or its whole
 *   body), a recorded error with its status, chunks spelled out in the test
 *   (with the body a whole request gets instead), or an endless stream, one
 *   chunk every 10 ms until the gateway hangs up (`nextHangUp`). Any other
 *   model is OpenAI's 404 `model_not_found`.
 * - `steps`: a tool loop of `steps` rounds, as the gemini flavour's tests
 *   run it: to a question two parallel calls of the first offered tool, to
 *   each round of tool results one more call, then "Done after n steps.".
 * - `late-carriers`: a chat turn streamed in the order of a route whose
 *   carriers come last (OpenRouter streaming Gemini): "Thinking n, step by
 *   step." and "Answer n is here." first, then — past `hold`, when held —
 *   the turn's `reasoning_details` (`lateCarriers(n)`, one
 *   `reasoning.encrypted` item, as OpenRouter streams Gemini's thought
 *   signature), the finish and the usage.
 */
export type Answers =
  | { readonly kind: "scripted" }
  | { readonly kind: "numbered" }
  | { readonly kind: "late-carriers" }
  | { readonly kind: "steps"; readonly steps: number }
  | { readonly kind: "replay"; readonly models: Readonly<Record<string, Replay>> }
  | { readonly kind: "recorded" }
  | { readonly kind: "cassette"; readonly interactions: readonly Interaction[] }
  | { readonly kind: "planned"; readonly plan?: ToolPlan }
  | { readonly kind: "tool-loop"; readonly files: readonly FixtureFile[] };

export interface UpstreamOptions {
  strict?: Record<string, StrictProfile>;
  fixedErrors?: Record<string, FixedError>;
  /** The id of the n-th tool call a flavour issues (scripted answers); default `call_<flavor>_<n>`. */
  callId?: (flavor: string, n: number) => string;
  answers?: Answers;
  /**
   * The must-echo rule of DeepSeek, Kimi and MiMo: `issued` (the default) wants
   * the very reasoning it issued for a tool call, and any non-empty text for a
   * call it did not issue; `own-calls` also refuses a call it never made.
   */
  echo?: "issued" | "own-calls";
  /** Holds every answer this long before its first byte. */
  firstByteDelayMs?: number;
  /** Holds a stream this long before its finishing chunk. */
  finishDelayMs?: number;
  /** While held, a stream waits after its reasoning (`late-carriers`: after its text), a whole answer before its first byte. */
  hold?: Hold;
  /** The API key a flavour wants (`Authorization: Bearer <key>`); without it, its provider's refusal. */
  apiKeys?: Record<string, string>;
  /** Scripted reasoning padded to this many characters, as a model that thinks at length (the compaction tests' long histories). */
  reasoningChars?: number;
  /** The size of the `sealed` flavour's encrypted reasoning, in bytes before base64; default 64. */
  blobBytes?: number;
  /** How a host says it served each answer, as OpenAI does on every answer and chunk (`service_tier`, `system_fingerprint`); none by default. */
  served?: { readonly service_tier?: string; readonly system_fingerprint?: string };
}

export interface OpenAIUpstream {
  readonly url: string;
  baseUrl(flavor: string): string;
  readonly received: ReceivedRequest[];
  requestsFor(flavor: string): ReceivedRequest[];
  /** The function a recorded tool-call answer calls; the first offered when unset. */
  callName: string | undefined;
  /** Resolves once `count` requests in all have arrived. */
  arrived(count: number): Promise<void>;
  /** Resolves when the gateway next hangs up on an endless stream (`replay`). */
  nextHangUp(): Promise<void>;
  /** What was issued with the turn that made this tool call (by its id) or answered this text (`text:<content>`). */
  issuedFor(key: string): Issued | undefined;
  close(): Promise<void>;
}

/** The emulator as one DeepSeek endpoint (`baseUrl` is its `/deepseek/v1`). */
export interface DeepSeekUpstream {
  readonly baseUrl: string;
  /** Every request body received, parsed, in order. */
  readonly requests: ChatBody[];
  /** The status of every answer, in order. */
  readonly statuses: number[];
  /** Every request with what was answered. */
  readonly exchanges: ReceivedRequest[];
  callName: string | undefined;
  close(): Promise<void>;
}

/** What an answer issued, as the emulator keeps it to check what comes back. */
export interface Issued {
  readonly reasoning: string;
  readonly details: Record<string, unknown>[] | undefined;
  readonly opaque?: string | number;
}

/** DeepSeek's answer to a tool-call turn sent back without its reasoning (https://api-docs.deepseek.com/guides/thinking_mode). */
export const MISSING_REASONING = "The `reasoning_content` in the thinking mode must be passed back to the API.";

/** DeepSeek's whole 400 body for it (V4 thinking mode). */
export const DEEPSEEK_MISSING_REASONING = {
  error: { message: MISSING_REASONING, type: "invalid_request_error", param: null, code: "invalid_request_error" },
} as const;

const MUST_ECHO: Record<string, (index: number) => string> = {
  deepseek: () => JSON.stringify(DEEPSEEK_MISSING_REASONING),
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
  compatible: { text: ["reasoning_content"], details: false },
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
  gemini: { text: [], details: false },
  dashscope: { text: ["reasoning_content"], details: false },
  sealed: { text: ["reasoning_content"], details: false },
  minimax: { text: [], details: false },
  copilot: { text: ["reasoning_text"], details: false },
  copilotbad: { text: ["reasoning_text"], details: false },
};

/** Custom (strict / fixed-error) flavours answer like an OpenRouter-format gateway: plain text and details. */
const DEFAULT_REPLY = { text: ["reasoning_content"], details: true };

/** Local servers under their own names: the same lenient server as `local` or `compatible`. */
const SAME_AS: Record<string, string> = { vllm: "local", ollama: "local", "vllm-legacy": "compatible", sglang: "compatible", llamacpp: "compatible" };

function replyFields(flavor: string): { text: string[]; details: boolean } {
  return REPLY_FIELDS[flavor] ?? REPLY_FIELDS[SAME_AS[flavor] ?? ""] ?? DEFAULT_REPLY;
}

const object = (value: unknown): Record<string, unknown> => (value && typeof value === "object" ? (value as Record<string, unknown>) : {});

/**
 * How each host's chat template renders earlier reasoning: the one field it
 * reads, whether the request asks it to keep turns before the last user
 * message, and whether it drops them all. Sources:
 * - kimi (K2.6): `thinking.keep: "all"` ("null (default, not kept) / \"all\" (enables it)"),
 *   https://platform.kimi.ai/docs/guide/use-kimi-k2-thinking-model.
 * - zai (GLM-4.7 / GLM-5): `thinking.clear_thinking: false` is "Preserved Thinking",
 *   https://docs.z.ai/guides/capabilities/thinking-mode; GLM silently drops what it does not keep.
 * - dashscope (Qwen3.6): `preserve_thinking: true` (the chat template renders reasoning only after
 *   the last user query otherwise), https://huggingface.co/Qwen/Qwen3.6-35B-A3B.
 * - fireworks: `reasoning_history`: `disabled` | `interleaved` (the default here: the current tool
 *   loop only) | `preserved` (https://docs.fireworks.ai/guides/reasoning; the names as Fireworks
 *   defines them, https://github.com/vercel/ai/blob/main/packages/fireworks/CHANGELOG.md, release 1.0.50).
 * - vllm: `reasoning` (https://github.com/vllm-project/vllm/pull/27752; the old name removed by
 *   https://github.com/vllm-project/vllm/pull/33402); vllm-legacy: `reasoning_content`. sglang and
 *   llamacpp: `reasoning_content` (https://docs.sglang.ai/advanced_features/separate_reasoning.html,
 *   https://github.com/ggml-org/llama.cpp/blob/master/tools/server/README.md). ollama (`/v1`):
 *   `reasoning`, mapped to its native thinking (https://github.com/ollama/ollama/blob/main/openai/openai.go).
 *   Local servers keep what their template renders.
 * - minimax (M2.x): read back from `reasoning_details`, or inline `<think>` in the content ("MiniMax
 *   highly recommends preserving reasoning between turns", https://openrouter.ai/minimax/minimax-m2;
 *   the switch, https://platform.minimax.io/docs/guides/text-m2-function-call); what is not sent back is forgotten.
 */
const TEMPLATES: Record<string, { field: string; keepsAll: (body: ChatBody) => boolean; keepsNone?: (body: ChatBody) => boolean }> = {
  kimi: { field: "reasoning_content", keepsAll: (body) => object(body.thinking).keep === "all" },
  zai: { field: "reasoning_content", keepsAll: (body) => object(body.thinking).clear_thinking === false },
  dashscope: { field: "reasoning_content", keepsAll: (body) => body.preserve_thinking === true },
  fireworks: {
    field: "reasoning_content",
    keepsAll: (body) => body.reasoning_history === "preserved",
    keepsNone: (body) => body.reasoning_history === "disabled",
  },
  minimax: { field: "reasoning_details", keepsAll: () => true },
  local: { field: "reasoning", keepsAll: () => true },
  compatible: { field: "reasoning_content", keepsAll: () => true },
};

/** The earlier reasoning the host's template renders: from its one field, all turns or only those after the last user message. */
function seenReasoning(flavor: string, body: ChatBody): string[] | undefined {
  const template = TEMPLATES[flavor] ?? TEMPLATES[SAME_AS[flavor] ?? ""];
  if (!template) return undefined;
  if (template.keepsNone?.(body)) return [];
  const lastUser = body.messages.findLastIndex((message) => message.role === "user");
  const keepAll = template.keepsAll(body);
  return body.messages.flatMap((message, index) => {
    const text = template.field === "reasoning_details" ? (detailsText(message.reasoning_details) ?? inlineText(message.content)) : message[template.field];
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

/** MiniMax's reasoning: split out into its `reasoning_details` when the request asks, else inline in the content. */
function asMiniMax(body: ChatBody, reply: Reply): void {
  if (body.reasoning_split === true)
    reply.details = [{ type: "reasoning.text", id: "reasoning-text-1", format: "MiniMax-response-v1", index: 0, text: reply.reasoning }];
  else reply.inline = true;
}

export async function startOpenAIUpstream(options: UpstreamOptions = {}): Promise<OpenAIUpstream> {
  // a custom flavour named like a built-in one would answer and refuse by both sets of rules at once
  for (const name of Object.keys(options.strict ?? {}))
    if (name in REPLY_FIELDS || name in SAME_AS) throw new Error(`strict flavour ${name} is a built-in flavour`);
  const received: ReceivedRequest[] = [];
  const issued = new Map<string, Issued>(); // by tool-call id, or by content for text turns
  const answers = options.answers ?? { kind: "scripted" };
  const recordings = answers.kind === "recorded" ? loadRecordings() : undefined;
  const waiting: { count: number; resolve: () => void }[] = [];
  const hangUps = new EventEmitter();
  let counter = 0;

  const handle = async (record: ReceivedRequest, response: ServerResponse): Promise<void> => {
    const { flavor, body } = record;
    const answer = (status: number, text: string) => {
      record.status = status;
      response.writeHead(status, { "content-type": "application/json" }).end(text);
    };
    if (options.firstByteDelayMs) await delay(options.firstByteDelayMs);
    const key = options.apiKeys?.[flavor];
    if (key !== undefined && record.headers.authorization !== `Bearer ${key}`) {
      record.answer = "rejected";
      const refusal = keyRefusal(flavor, record.headers.authorization);
      return answer(refusal.status, refusal.body);
    }
    const fixed = options.fixedErrors?.[flavor];
    if (fixed) return answer(fixed.status, fixed.body);
    const problem = validate(flavor, body, issued, options.strict?.[flavor], options.echo ?? "issued");
    if (problem) {
      record.answer = "rejected";
      record.reason = problem.reason;
      return answer(problem.status, problem.body);
    }
    if (recordings) return replayRecording(record, response, recordings, upstream.callName);
    if (answers.kind === "cassette") return replayInteraction(record, response, answers.interactions[received.indexOf(record)]);
    if (answers.kind === "replay") return replayModel(record, response, answers.models[body.model], hangUps);
    const n = ++counter;
    const reply = replyFor(answers, flavor, body, n, options.callId);
    if (flavor === "copilot") reply.opaque = `opaque-${n}-Zm9v/+==`;
    if (flavor === "copilotbad") reply.opaque = n;
    if (flavor === "minimax") asMiniMax(body, reply);
    if (flavor === "gemini") signFirstCall(reply);
    if (options.reasoningChars) reply.reasoning = padded(reply.reasoning, options.reasoningChars);
    if (flavor === "sealed") reply.details = [{ type: "reasoning.encrypted", data: blob(n, options.blobBytes ?? 64), format: "openai-responses-v1", index: 0 }];
    remember(issued, reply);
    record.answer = reply.answer;
    record.reasoning = reply.reasoning;
    record.seen = seenReasoning(flavor, body);
    if (reply.toolCalls[0]) record.tool = reply.toolCalls[0].name;
    if (body.stream) await streamReply(response, flavor, body.model, reply, options);
    else {
      await options.hold?.passage();
      answer(200, JSON.stringify(wholeReply(flavor, body.model, reply, options.served)));
    }
  };

  const server = createServer((request, response) => {
    let raw = "";
    request.setEncoding("utf8");
    request.on("data", (chunk: string) => (raw += chunk));
    request.on("end", () => {
      const flavor = (request.url ?? "/").split("/")[1] ?? "";
      let body: ChatBody;
      try {
        body = JSON.parse(raw) as ChatBody;
      } catch (error) {
        response.writeHead(400, { "content-type": "application/json" });
        response.end(JSON.stringify({ error: { message: String(error), type: "invalid_request_error", param: null, code: "invalid_request_error" } }));
        return;
      }
      const resentToolTurns = (body.messages ?? []).filter((message) => message.role === "assistant" && message.tool_calls?.length).length;
      const record: ReceivedRequest = { flavor, body, raw, headers: request.headers, status: 200, resentToolTurns };
      received.push(record);
      for (const waiter of waiting.filter((entry) => entry.count <= received.length)) waiter.resolve();
      void handle(record, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const upstream: OpenAIUpstream = {
    url,
    baseUrl: (flavor) => `${url}/${flavor}/${flavor === "gemini" ? "v1beta/openai" : "v1"}`,
    received,
    requestsFor: (flavor) => received.filter((request) => request.flavor === flavor),
    callName: undefined,
    issuedFor: (key) => issued.get(key),
    nextHangUp: () => new Promise<void>((resolve) => hangUps.once("hang-up", () => resolve())),
    arrived: (count) => (received.length >= count ? Promise.resolve() : new Promise<void>((resolve) => waiting.push({ count, resolve }))),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return upstream;
}

/** The emulator as one DeepSeek endpoint; answers `planned` unless told otherwise. */
export async function startDeepSeek(options: UpstreamOptions = {}): Promise<DeepSeekUpstream> {
  const upstream = await startOpenAIUpstream({ answers: { kind: "planned" }, ...options });
  const exchanges = () => upstream.requestsFor("deepseek");
  return {
    baseUrl: upstream.baseUrl("deepseek"),
    get requests() {
      return exchanges().map((request) => request.body);
    },
    get statuses() {
      return exchanges().map((request) => request.status);
    },
    get exchanges() {
      return exchanges();
    },
    get callName() {
      return upstream.callName;
    },
    set callName(name) {
      upstream.callName = name;
    },
    close: () => upstream.close(),
  };
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A refusal: the provider's status and body, and why in words (for the test's messages). */
interface Refusal {
  status: number;
  body: string;
  reason?: string;
}

function validate(
  flavor: string,
  body: ChatBody,
  issued: Map<string, Issued>,
  strict: StrictProfile | undefined,
  echo: "issued" | "own-calls",
): Refusal | undefined {
  if (flavor === "gemini") return geminiProblem(body);
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
      const reason =
        expected === undefined && echo === "own-calls"
          ? `messages[${index}] calls ${calls[0]!.id}, a tool call this upstream never made`
          : typeof sent !== "string" || sent === ""
            ? `messages[${index}] has no reasoning_content`
            : expected !== undefined && sent !== expected
              ? `messages[${index}].reasoning_content is not the reasoning of that turn`
              : undefined;
      if (reason) return { status: 400, body: mustEcho(index), reason };
    }
  }
  if (flavor === "copilot" || flavor === "copilotbad") return copilotProblem(body, issued);
  if (flavor === "openrouter") return routerProblem(body, issued);
  if (flavor === "sealed") return sealedProblem(body, issued);
  if (flavor === "novita") {
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
  toolCalls: { id: string; name: string; arguments: string; extra_content?: Record<string, unknown> }[];
  details: Record<string, unknown>[] | undefined;
  answer: "tool_call" | "final" | "plain";
  usage: Record<string, unknown>;
  /** Streamed in fragments of this many characters, as a provider streams tokens; unset: reasoning in two halves, the rest whole. */
  fragment?: number;
  /** The details come whole after the text (and wait there while held), not after the reasoning. */
  late?: boolean;
  /** The reasoning is written in the content, `<think>` first (MiniMax without `reasoning_split`). */
  inline?: boolean;
}

const SCRIPTED_USAGE = { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30, completion_tokens_details: { reasoning_tokens: 12 } };

/** The answer of the model `answers` describes (the recorded kinds are served before this). */
function replyFor(answers: Answers, flavor: string, body: ChatBody, n: number, callId: UpstreamOptions["callId"]): Reply {
  switch (answers.kind) {
    case "numbered":
      return numberedReply(body, n);
    case "late-carriers":
      return lateCarriersReply(n);
    case "steps":
      return stepsReply(body, answers.steps);
    case "planned":
      return plannedReply(body, n, answers.plan ?? firstTool);
    case "tool-loop":
      return toolLoopReply(body, n, answers.files);
    default:
      return scriptReply(flavor, body, n, callId);
  }
}

/** Offered tools and a user turn → a tool call; a tool result → the answer. Deterministic per request number. */
function scriptReply(flavor: string, body: ChatBody, n: number, callId = (name: string, index: number) => `call_${name}_${index}`): Reply {
  const last = body.messages.at(-1);
  const tools = (body.tools ?? []).flatMap((tool) => (tool.function ? [tool.function.name] : []));
  const reasoning = `Step ${n}: the ${flavor} model thinks about "${String(last?.content ?? "").slice(0, 40)}".`;
  const details = replyFields(flavor).details
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
  const usage = SCRIPTED_USAGE;
  const family = flavor === "openrouter" ? routerFamily(body.model) : undefined;
  if (tools.length > 0 && last?.role === "user") {
    // Gemini behind OpenRouter calls in parallel: each call gets its own signature
    const calls = Array.from({ length: family === "google" ? 2 : 1 }, (_, i) => ({
      id: i === 0 ? callId(flavor, n) : `${callId(flavor, n)}_${i}`,
      name: tools[0]!,
      arguments: `{"city": "Florence", "n": ${n}}`,
    }));
    return { reasoning, content: "", toolCalls: calls, details: family ? routerDetails(family, n, reasoning, calls) : details, answer: "tool_call", usage };
  }
  return {
    reasoning,
    content: `Answer ${n} from ${flavor}.`,
    toolCalls: [],
    details: family ? routerDetails(family, n, reasoning, []) : details,
    answer: tools.length > 0 ? "final" : "plain",
    usage,
  };
}

/** Copilot's 400 body. */
function copilotRefusal(message: string): { error: { message: string; code: string } } {
  return { error: { message, code: "invalid_request_body" } };
}

/** What Copilot answers to an assistant tool-call turn whose `reasoning_opaque` is not the one it issued. */
const opaqueRefusal = (index: number) => copilotRefusal(`messages[${index}]: invalid reasoning_opaque`);

/** The request keys Copilot's chat API accepts; any other is refused, not ignored. */
const COPILOT_TOP_LEVEL = new Set([
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
const COPILOT_ASSISTANT_KEYS = new Set(["role", "content", "tool_calls", "name", "reasoning_text", "reasoning_opaque"]);

/** Copilot's checks, in its order: unknown keys, text without its opaque, then the opaque issued for each tool-call turn (as Gemini's signatures). */
function copilotProblem(body: ChatBody, issued: Map<string, Issued>): Refusal | undefined {
  const reject = (message: string): Refusal => ({ status: 400, body: JSON.stringify(copilotRefusal(message)), reason: message });
  for (const key of Object.keys(body)) if (!COPILOT_TOP_LEVEL.has(key)) return reject(`CAPIError: 400 Unrecognized request argument supplied: ${key}`);
  for (const [index, message] of body.messages.entries()) {
    if (message.role !== "assistant") continue;
    for (const key of Object.keys(message))
      if (!COPILOT_ASSISTANT_KEYS.has(key)) return reject(`CAPIError: 400 Unrecognized request argument supplied: messages[${index}].${key}`);
    if (message.reasoning_text !== undefined && message.reasoning_opaque === undefined)
      return reject(`messages[${index}]: reasoning_text requires reasoning_opaque`);
    const calls = (message.tool_calls as { id: string }[] | undefined) ?? [];
    const expected = calls.map((call) => issued.get(call.id)?.opaque).find((value) => value !== undefined);
    if (expected !== undefined && message.reasoning_opaque !== expected) return { status: 400, body: JSON.stringify(opaqueRefusal(index)) };
  }
  return undefined;
}

/** A request without the flavour's API key: Google's 400 for Gemini, Copilot's 401 for Copilot, OpenAI's 401 (the key sent, masked as OpenAI masks it) for the others. */
function keyRefusal(flavor: string, sent: string | undefined): Refusal {
  if (flavor === "gemini") return geminiError("API key not valid. Please pass a valid API key.");
  if (flavor === "copilot") return { status: 401, body: JSON.stringify({ error: { message: "unauthorized: token expired" } }) };
  const key = (sent ?? "").replace(/^Bearer /, "");
  const masked = key.length > 8 ? `${key.slice(0, 3)}${"*".repeat(key.length - 7)}${key.slice(-4)}` : key;
  return {
    status: 401,
    body: JSON.stringify({
      error: {
        message: `Incorrect API key provided: ${masked}. You can find your API key at https://platform.openai.com/account/api-keys.`,
        type: "invalid_request_error",
        param: null,
        code: "invalid_api_key",
      },
    }),
  };
}

/**
 * Gemini 3 through Google's OpenAI-compatible endpoint, as strict as the real one:
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
 */
const GEMINI_RULES = {
  topLevel: new Set([
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
  ]),
  messageKeys: new Set(["role", "content", "name", "tool_calls", "tool_call_id", "extra_content"]),
  toolCallKeys: new Set(["id", "type", "function", "extra_content"]),
};

/** Gemini's documented way to send a call whose signature was lost. */
export const SKIP_THOUGHT_SIGNATURE = "skip_thought_signature_validator";
const SIGNING_KEY = randomBytes(32);

/** The signature the gemini flavour issues for a call: bound to its name and arguments. */
export function signCall(name: string, args: string): string {
  return createHmac("sha256", SIGNING_KEY).update(`${name}\u0000${args}`).digest("base64");
}

/** Gemini signs the first call of each step it answers. */
function signFirstCall(reply: Reply): void {
  const first = reply.toolCalls[0];
  if (first) first.extra_content = { google: { thought_signature: signCall(first.name, first.arguments) } };
}

/** Google's error envelope on this endpoint: an array around one error. */
function geminiError(message: string, status = 400, code = "INVALID_ARGUMENT"): Refusal {
  return { status, body: JSON.stringify([{ error: { code: status, message, status: code } }]), reason: message };
}

function unknownName(name: string, at?: string): Refusal {
  return geminiError(`Invalid JSON payload received. Unknown name "${name}"${at ? ` at '${at}'` : ""}: Cannot find field.`);
}

type GeminiCall = { function: { name: string; arguments: string }; extra_content?: { google?: { thought_signature?: unknown } } } & Record<string, unknown>;

/**
 * Field names, then signatures. Positions count Gemini's contents: the
 * system message is not one, and consecutive tool results are one.
 */
function geminiProblem(body: ChatBody): Refusal | undefined {
  if (!Array.isArray(body.messages)) return geminiError("Invalid JSON payload received.");
  for (const key of Object.keys(body)) if (!GEMINI_RULES.topLevel.has(key)) return unknownName(key);
  const messages = body.messages as (ChatMessage & { tool_calls?: GeminiCall[] })[];
  for (const [i, message] of messages.entries()) {
    for (const key of Object.keys(message)) if (!GEMINI_RULES.messageKeys.has(key)) return unknownName(key, `messages[${i}]`);
    for (const [j, call] of (message.tool_calls ?? []).entries())
      for (const key of Object.keys(call)) if (!GEMINI_RULES.toolCallKeys.has(key)) return unknownName(key, `messages[${i}].tool_calls[${j}]`);
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
      if (typeof signature === "string" && signature !== SKIP_THOUGHT_SIGNATURE && signature !== signCall(call.function.name, call.function.arguments))
        return geminiError("Corrupted thought signature.");
    }
    const first = message.tool_calls?.[0];
    if (i > lastUser && first && typeof first.extra_content?.google?.thought_signature !== "string")
      return geminiError(
        `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${first.function.name}\` , position ${position}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`,
      );
  }
  return undefined;
}

/** A tool loop of `steps` rounds: two parallel calls to a question, one more per round of results, then the answer. */
function stepsReply(body: ChatBody, steps: number): Reply {
  const messages = body.messages;
  const tool = body.tools?.[0]?.function?.name;
  const lastUser = messages.findLastIndex((message) => message.role === "user");
  const done = messages.slice(lastUser + 1).filter((message) => message.role === "assistant" && message.tool_calls?.length).length;
  const usage = { prompt_tokens: 20, completion_tokens: 8, total_tokens: 28 };
  if (!tool || done >= steps)
    return { reasoning: "", content: `Done after ${done} steps.`, toolCalls: [], details: undefined, answer: tool ? "final" : "plain", usage };
  const call = (city: string) => ({ id: `function-call-${randomBytes(6).toString("hex")}`, name: tool, arguments: JSON.stringify({ location: city }) });
  const toolCalls = done === 0 ? [call("Rome"), call("Oslo")] : [call(`City ${done}`)];
  return { reasoning: "", content: "", toolCalls, details: undefined, answer: "tool_call", usage };
}

/** `reasoning` padded with more of the same thought to `chars` characters. */
function padded(reasoning: string, chars: number): string {
  return `${reasoning} ${"considering the request carefully. ".repeat(Math.ceil(chars / 34))}`.slice(0, Math.max(chars, reasoning.length));
}

/** Deterministic base64 of `bytes` pseudo-random bytes: incompressible, like real ciphertext. */
function blob(n: number, bytes: number): string {
  const parts: Buffer[] = [];
  for (let block = 0; parts.length * 32 < bytes; block++) parts.push(createHash("sha256").update(`${n}:${block}`).digest());
  return Buffer.concat(parts).subarray(0, bytes).toString("base64");
}

/** A turn the `sealed` flavour answered must come back with its encrypted reasoning, byte for byte. */
function sealedProblem(body: ChatBody, issued: Map<string, Issued>): Refusal | undefined {
  for (const [index, message] of body.messages.entries()) {
    if (message.role !== "assistant") continue;
    const calls = message.tool_calls ?? [];
    const expected = (calls.length > 0 ? issued.get(calls[0]!.id) : issued.get(`text:${String(message.content ?? "")}`))?.details;
    if (!expected || JSON.stringify(message.reasoning_details) === JSON.stringify(expected)) continue;
    const data = String((expected[0] as { data?: unknown }).data);
    return {
      status: 400,
      reason: `messages[${index}]: the encrypted reasoning is missing or was modified`,
      body: JSON.stringify({
        error: {
          message: `The encrypted content ${data.slice(0, 4)}...${data.slice(-4)} could not be verified. Reason: Encrypted content could not be decrypted or parsed.`,
          type: "invalid_request_error",
          param: null,
          code: "invalid_encrypted_content",
        },
      }),
    };
  }
  return undefined;
}

/** The `format` of OpenRouter's `reasoning_details` per upstream model family. */
export const ROUTER_FORMATS = { anthropic: "anthropic-claude-v1", openai: "openai-responses-v1", google: "google-gemini-v1" } as const;
type RouterFamily = keyof typeof ROUTER_FORMATS;

/** The family of an OpenRouter model name (`google/gemini-3-pro`); Claude's shape for any other. */
function routerFamily(model: string): RouterFamily {
  const prefix = model.split("/")[0] ?? "";
  return prefix === "openai" || prefix === "google" ? prefix : "anthropic";
}

/**
 * OpenRouter's details per family
 * (https://openrouter.ai/docs/use-cases/reasoning-tokens#reasoning-details; the
 * types as its SDK declares them,
 * https://github.com/OpenRouterTeam/ai-sdk-provider/blob/main/src/schemas/reasoning-details.ts):
 * Claude's signed `reasoning.text` (and a redacted block as `reasoning.encrypted`);
 * OpenAI's `reasoning.summary` and `reasoning.encrypted` under the reasoning
 * item's `rs_` id and one index; Gemini's `reasoning.text` and one
 * `reasoning.encrypted` per function call, its `id` that call's id (the thought signature).
 */
function routerDetails(family: RouterFamily, n: number, reasoning: string, calls: { id: string }[]): Record<string, unknown>[] {
  const format = ROUTER_FORMATS[family];
  if (family === "anthropic")
    return [
      { type: "reasoning.text", text: reasoning, format, index: 0, signature: `sig-openrouter-${n}-${Buffer.from(reasoning).toString("base64")}` },
      { type: "reasoning.encrypted", data: `enc-${n}-AAEC/+8=`, format, index: 1 },
    ];
  if (family === "openai")
    return [
      { type: "reasoning.summary", summary: `**Plan ${n}** ${reasoning}`, id: `rs_${n}`, format, index: 0 },
      { type: "reasoning.encrypted", data: `gAAAAB${n}enc+/==`, id: `rs_${n}`, format, index: 0 },
    ];
  return [
    { type: "reasoning.text", text: reasoning, format, index: 0 },
    ...calls.map((call, i) => ({ type: "reasoning.encrypted", data: `CiQB${n}${i}sig==`, id: call.id, format, index: i + 1 })),
  ];
}

/** JSON with keys sorted: a provider compares what it parsed, not the order the keys came in. */
export function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    item && typeof item === "object" && !Array.isArray(item)
      ? Object.fromEntries(Object.entries(item as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)))
      : item,
  );
}

/** OpenRouter's wrapper around an upstream provider's refusal. */
function routerRefusal(provider: string, raw: string): Refusal {
  return { status: 400, body: JSON.stringify({ error: { message: "Provider returned error", code: 400, metadata: { raw, provider_name: provider } } }) };
}

/**
 * What OpenRouter passes on when the details come back wrong, for the family
 * of the model asked: a changed array of its own family's is Anthropic's
 * "Invalid `signature` in `thinking` block", or for OpenAI the wrapper alone
 * (no public text of OpenAI's for it was found); in the current tool loop a
 * tool-call turn without its details is Anthropic's "Expected `thinking`…"
 * (https://docs.claude.com/en/docs/build-with-claude/extended-thinking) or
 * Gemini's "Function call is missing a thought_signature…"
 * (https://ai.google.dev/gemini-api/docs/thought-signatures). Another
 * family's details are the upstream's to ignore.
 */
function routerProblem(body: ChatBody, issued: Map<string, Issued>): Refusal | undefined {
  const family = routerFamily(body.model);
  const lastUser = body.messages.findLastIndex((message) => message.role === "user");
  for (const [index, message] of body.messages.entries()) {
    if (message.role !== "assistant") continue;
    const calls = message.tool_calls ?? [];
    const expected = (calls.length > 0 ? issued.get(calls[0]!.id) : issued.get(`text:${String(message.content ?? "")}`))?.details as
      Record<string, unknown>[] | undefined;
    const sent = message.reasoning_details as Record<string, unknown>[] | undefined;
    const own = expected?.[0]?.format === ROUTER_FORMATS[family];
    if (sent !== undefined && own && canonical(sent) !== canonical(expected)) {
      if (family === "anthropic")
        return routerRefusal(
          "Anthropic",
          JSON.stringify({
            type: "error",
            error: { type: "invalid_request_error", message: `messages.${index}.content.0: Invalid \`signature\` in \`thinking\` block` },
          }),
        );
      if (family === "openai") return routerRefusal("OpenAI", "");
    }
    if (index <= lastUser || calls.length === 0 || !own) continue;
    // the current tool loop's own turns must carry what was issued for them
    if (family === "anthropic" && !sent?.some((detail) => detail.type === "reasoning.text" && typeof detail.signature === "string"))
      return routerRefusal(
        "Anthropic",
        JSON.stringify({
          type: "error",
          error: {
            type: "invalid_request_error",
            message: `messages.${index}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`tool_use\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking`,
          },
        }),
      );
    if (family === "google" && !sent?.some((detail) => detail.type === "reasoning.encrypted" && detail.id === calls[0]!.id))
      return routerRefusal(
        "Google",
        JSON.stringify({
          error: {
            code: 400,
            message: `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${calls[0]!.function.name}\` , position ${index + 1}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`,
            status: "INVALID_ARGUMENT",
          },
        }),
      );
  }
  return undefined;
}

/** The `reasoning_details` the n-th `late-carriers` answer sends after its text. */
export function lateCarriers(n: number): Record<string, unknown>[] {
  return [{ type: "reasoning.encrypted", data: `late-signature-${n}`, format: "google-gemini-v1", index: 0 }];
}

function lateCarriersReply(n: number): Reply {
  const usage = { prompt_tokens: 10, completion_tokens: 8, total_tokens: 18 };
  return {
    reasoning: `Thinking ${n}, step by step.`,
    content: `Answer ${n} is here.`,
    toolCalls: [],
    details: lateCarriers(n),
    late: true,
    answer: "plain",
    usage,
  };
}

/** A chat turn numbered by the answers so far. */
function numberedReply(body: ChatBody, n: number): Reply {
  const reasoning = `Thinking ${n} about ${String(body.messages.at(-1)?.content)}.`;
  return { reasoning, content: `Answer ${n}.`, toolCalls: [], details: undefined, answer: "plain", usage: SCRIPTED_USAGE };
}

const firstTool: ToolPlan = (tools) => ({ name: tools[0]!, arguments: { location: "Paris" } });

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((part: { text?: unknown }) => (typeof part?.text === "string" ? part.text : "")).join("");
  return "";
}

/** DeepSeek's usage, with its prompt cache counts. */
const DEEPSEEK_USAGE = {
  prompt_tokens: 40,
  completion_tokens: 20,
  total_tokens: 60,
  prompt_cache_hit_tokens: 8,
  prompt_cache_miss_tokens: 32,
  completion_tokens_details: { reasoning_tokens: 12 },
};

/** Fresh reasoning every turn; the tool `plan` picks after a user turn; what the tool said after a tool result. */
function plannedReply(body: ChatBody, n: number, plan: ToolPlan): Reply {
  const last = body.messages.at(-1)!;
  const lastUser = body.messages.findLast((message) => message.role === "user");
  const fullText = textOf(lastUser?.content);
  const tools = (body.tools ?? []).flatMap((tool) => (tool.function ? [tool.function.name] : []));
  const call = last.role !== "tool" && tools.length > 0 ? plan(tools, fullText) : undefined;
  const reasoning = `Turn ${n}: the user wrote ${JSON.stringify(fullText.slice(0, 60))}. ${call ? `I will call ${call.name}.` : "I can answer now."} (${randomBytes(4).toString("hex")})`;
  const content = last.role === "tool" ? `The tool answered: ${textOf(last.content).slice(0, 300)}` : call ? "" : `Hello from the emulator, turn ${n}.`;
  const toolCalls = call ? [{ id: `call_00_${randomBytes(12).toString("hex")}`, name: call.name, arguments: JSON.stringify(call.arguments) }] : [];
  const answer = call ? "tool_call" : tools.length > 0 ? "final" : "plain";
  return { reasoning, content, toolCalls, details: undefined, answer, usage: DEEPSEEK_USAGE, fragment: 12 };
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

const TOOL_LOOP_USAGE = { prompt_tokens: 400, completion_tokens: 60, total_tokens: 460, completion_tokens_details: { reasoning_tokens: 30 } };

/** Reads `files` one per turn with the offered reader, then answers with the markers the tool results carried. */
function toolLoopReply(body: ChatBody, n: number, files: readonly FixtureFile[]): Reply {
  const base = { details: undefined, usage: TOOL_LOOP_USAGE, fragment: 12 };
  const lastUser = body.messages.map((message) => message.role).lastIndexOf("user");
  const results = body.messages.slice(lastUser + 1).filter((message) => message.role === "tool");
  const offered = new Map(
    (body.tools ?? []).flatMap((tool) => (tool.function ? [[tool.function.name, tool.function.parameters?.required ?? []] as const] : [])),
  );
  const reader = READERS.find((candidate) => offered.has(candidate.name));
  // a request without tools (a title, a summary): DeepSeek answers it with reasoning and text
  if (!reader) return { ...base, reasoning: `Turn ${n}: a short reply is all this needs.`, content: "Reading the notes", toolCalls: [], answer: "plain" };
  const next = files[results.length];
  if (next) {
    const call = {
      id: `call_${n}_${randomUUID().slice(0, 8)}`,
      name: reader.name,
      arguments: JSON.stringify(reader.args(next.path, offered.get(reader.name)!)),
    };
    // every turn reasons differently, with characters a careless re-encoding would alter
    const reasoning = `Turn ${n} — I should read ${next.path} with \`${reader.name}\` before I answer; naïve guesses won't do. ${randomUUID()}`;
    return { ...base, reasoning, content: "", toolCalls: [call], answer: "tool_call" };
  }
  const seen = files.filter((file) => results.some((result) => JSON.stringify(result.content ?? "").includes(file.marker)));
  const content =
    seen.length === files.length ? `The notes say ${files.map((file) => file.marker).join(" and ")}.` : "The tool results did not contain the notes.";
  return { ...base, reasoning: `Turn ${n}: the tool results are in; I can answer now.`, content, toolCalls: [], answer: "final" };
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
  if (reply.inline) message.content = `${thinkTag(reply.reasoning)}${reply.content}`;
  for (const field of replyFields(flavor).text) message[field] = reply.reasoning;
  if (reply.details) message.reasoning_details = reply.details;
  if (reply.opaque !== undefined) message.reasoning_opaque = reply.opaque;
  if (reply.toolCalls.length > 0)
    message.tool_calls = reply.toolCalls.map((call) => ({
      id: call.id,
      type: "function",
      function: { name: call.name, arguments: call.arguments },
      ...(call.extra_content ? { extra_content: call.extra_content } : {}),
    }));
  return message;
}

function thinkTag(reasoning: string): string {
  return `<think>\n${reasoning}\n</think>\n\n`;
}

function wholeReply(flavor: string, model: string, reply: Reply, served: UpstreamOptions["served"]): object {
  return {
    id: `chatcmpl-${flavor}`,
    object: "chat.completion",
    created: 1_700_000_000,
    model,
    ...served,
    choices: [{ index: 0, message: messageOf(flavor, reply), finish_reason: reply.toolCalls.length > 0 ? "tool_calls" : "stop" }],
    usage: reply.usage,
  };
}

/** `text` in fragments of `size` characters, or in `whole` pieces when unset. */
function pieces(text: string, size: number | undefined, whole: number): string[] {
  if (text === "") return [];
  if (size) return text.match(new RegExp(`.{1,${size}}`, "gsu")) ?? [];
  const cut = Math.ceil(text.length / whole);
  return Array.from({ length: whole }, (_, index) => text.slice(index * cut, (index + 1) * cut)).filter(Boolean);
}

/**
 * Details as OpenRouter streams them, merged by `index` downstream: a text
 * or summary in two fragments, then its signature alone with no text (as
 * OpenRouter streams Claude), each encrypted item whole.
 */
function detailFragments(details: readonly Record<string, unknown>[]): Record<string, unknown>[][] {
  return details.flatMap((detail) => {
    const key = detail.type === "reasoning.summary" ? "summary" : detail.type === "reasoning.text" ? "text" : undefined;
    if (!key) return [[detail]];
    const { signature, ...unsigned } = detail;
    const whole = String(detail[key]);
    const fragments = [[{ ...unsigned, [key]: whole.slice(0, 5) }], [{ ...unsigned, [key]: whole.slice(5) }]];
    return signature === undefined ? fragments : [...fragments, [{ type: detail.type, signature, format: detail.format, index: detail.index }]];
  });
}

/** Streams the reply the way the provider does: reasoning in fragments, details fragments merged by index downstream. */
async function streamReply(
  response: ServerResponse,
  flavor: string,
  model: string,
  reply: Reply,
  { hold, finishDelayMs, served }: Pick<UpstreamOptions, "hold" | "finishDelayMs" | "served">,
): Promise<void> {
  response.writeHead(200, { "content-type": "text/event-stream" });
  const chunk = (delta: Record<string, unknown>, finish: string | null = null, usage?: object) =>
    `data: ${JSON.stringify({ id: `chatcmpl-${flavor}`, object: "chat.completion.chunk", created: 1_700_000_000, model, ...served, choices: [{ index: 0, delta, finish_reason: finish }], ...(usage ? { usage } : {}) })}\n\n`;
  const out: string[] = [chunk({ role: "assistant", content: "" })];
  for (const piece of pieces(reply.inline ? thinkTag(reply.reasoning) : reply.reasoning, reply.fragment, 2)) {
    const delta: Record<string, unknown> = {};
    if (reply.inline) delta.content = piece;
    if (flavor === "mistral") delta.content = [{ type: "thinking", thinking: [{ type: "text", text: piece }] }];
    for (const field of replyFields(flavor).text) delta[field] = piece;
    // MiniMax's split-out reasoning comes only in its details
    if (Object.keys(delta).length > 0) out.push(chunk(delta));
  }
  if (hold && !reply.late) {
    for (const piece of out.splice(0)) response.write(piece);
    await hold.passage();
  }
  if (reply.details && !reply.late) for (const details of detailFragments(reply.details)) out.push(chunk({ reasoning_details: details }));
  // Copilot splits one opaque in two, carried on the tool-call chunks when there are any: the plugin concatenates
  const cut = typeof reply.opaque === "string" ? Math.floor(reply.opaque.length / 2) : 0;
  const opaque = typeof reply.opaque === "string" ? [reply.opaque.slice(0, cut), reply.opaque.slice(cut)] : reply.opaque === undefined ? [] : [reply.opaque];
  if (reply.toolCalls.length === 0) for (const fragment of opaque.splice(0)) out.push(chunk({ reasoning_opaque: fragment }));
  const withOpaque = (delta: Record<string, unknown>) => (opaque.length > 0 ? { reasoning_opaque: opaque.shift(), ...delta } : delta);
  for (const piece of pieces(reply.content, reply.fragment, 1)) out.push(chunk({ content: piece }));
  reply.toolCalls.forEach((call, index) => {
    const extra = call.extra_content ? { extra_content: call.extra_content } : {};
    out.push(chunk(withOpaque({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" }, ...extra }] })));
    for (const piece of pieces(call.arguments, reply.fragment && reply.fragment - 2, 1))
      out.push(chunk(withOpaque({ tool_calls: [{ index, function: { arguments: piece } }] })));
  });
  for (const fragment of opaque) out.push(chunk({ reasoning_opaque: fragment }));
  if (reply.late) {
    for (const piece of out.splice(0)) response.write(piece);
    await hold?.passage();
    if (reply.details) out.push(chunk({ reasoning_details: reply.details }));
  }
  for (const piece of out) response.write(piece);
  if (finishDelayMs) await delay(finishDelayMs);
  response.write(chunk({}, reply.toolCalls.length > 0 ? "tool_calls" : "stop", reply.usage));
  response.end("data: [DONE]\n\n");
}

/** One recorded exchange: the stream (one JSON chunk per line) and the same answer whole. */
interface Recording {
  chunks: string[];
  whole: string;
}

function recording(name: string): Recording {
  const chunks = readFixture(`chunks/${name}.chunks.txt`)
    .split("\n")
    .filter((line) => line.trim());
  return { chunks, whole: readFixture(`chunks/${name}.json`) };
}

/**
 * Other providers' recorded reasoning streams, served when the request names
 * their upstream model: Groq's `reasoning` deltas, Mistral's `thinking`
 * content chunks, Alibaba's `reasoning_content` with a `choices: []` usage chunk.
 */
const OTHER_RECORDINGS: Record<string, string> = {
  "qwen/qwen3-32b": "groq/groq-reasoning",
  "magistral-medium-2507": "mistral/mistral-reasoning",
  "qwen3-max": "alibaba/alibaba-reasoning",
};

interface Recordings {
  reasoning: Recording;
  toolCall: Recording;
  byModel: Record<string, Recording>;
}

function loadRecordings(): Recordings {
  return {
    reasoning: recording("deepseek/deepseek-reasoning"),
    toolCall: recording("deepseek/deepseek-tool-call"),
    byModel: Object.fromEntries(Object.entries(OTHER_RECORDINGS).map(([model, name]) => [model, recording(name)])),
  };
}

/** The recorded answer for the request, with the markers of its last message applied. */
function replayRecording(record: ReceivedRequest, response: ServerResponse, recordings: Recordings, callName: string | undefined): void {
  const { body } = record;
  const last = body.messages.at(-1);
  const lastText = typeof last?.content === "string" ? last.content : JSON.stringify(last?.content ?? "");
  const answer = (status: number, type: string, text: string) => {
    record.status = status;
    response.writeHead(status, { "content-type": type });
    response.end(text);
  };
  if (lastText.includes("FAIL_400")) {
    record.answer = "rejected";
    return answer(400, "application/json", JSON.stringify(DEEPSEEK_MISSING_REASONING));
  }
  const name = callName ?? body.tools?.find((tool) => tool.type === "function")?.function?.name;
  const callsTool = Boolean(body.tools?.length) && last?.role !== "tool" && name !== undefined;
  let chosen = recordings.byModel[body.model] ?? (callsTool ? renamed(recordings.toolCall, name!) : recordings.reasoning);
  record.answer = chosen === recordings.reasoning ? (body.tools?.length ? "final" : "plain") : callsTool ? "tool_call" : "plain";
  if (record.answer === "tool_call") record.tool = name;
  // the same answer, cut off by max_tokens
  if (lastText.includes("FINISH_LENGTH")) chosen = edited(chosen, (text) => text.replace(/"finish_reason":\s*"stop"/, '"finish_reason":"length"'));
  const asked = body as ChatBody & { logprobs?: unknown; service_tier?: unknown };
  if (asked.logprobs === true || typeof asked.service_tier === "string")
    chosen = withServing(chosen, asked.logprobs === true, typeof asked.service_tier === "string" ? asked.service_tier : undefined);
  if (!body.stream) {
    record.answered = chosen.whole;
    return answer(200, "application/json", chosen.whole);
  }
  response.writeHead(200, { "content-type": "text/event-stream" });
  const failing = lastText.includes("FAIL_MID_STREAM");
  record.answered = (failing ? chosen.chunks.slice(0, 20) : chosen.chunks).map((chunk) => `data: ${chunk}\n\n`).join("") + (failing ? "" : "data: [DONE]\n\n");
  for (const chunk of failing ? chosen.chunks.slice(0, 20) : chosen.chunks) response.write(`data: ${chunk}\n\n`);
  // let the first half reach the gateway, then drop the connection as a crashing upstream would
  if (failing) setTimeout(() => response.socket?.destroy(), 50);
  else response.end("data: [DONE]\n\n");
}

/**
 * A recording as served to a request that asked for log probabilities or
 * named a service tier, as OpenAI's API serves them: each content token's
 * log probability (`choices[].logprobs.content`), and the tier that served
 * it (`default` for `auto`) on the answer and every chunk.
 */
function withServing(recording: Recording, logprobs: boolean, tier: string | undefined): Recording {
  const serve = (json: string, key: "delta" | "message"): string => {
    const object = JSON.parse(json) as Record<string, unknown> & { choices: Record<string, unknown>[] };
    for (const choice of object.choices) {
      const text = (choice[key] as { content?: unknown } | undefined)?.content;
      if (logprobs && typeof text === "string" && text !== "")
        choice.logprobs = { content: [{ token: text, logprob: -0.0125, bytes: [...Buffer.from(text)], top_logprobs: [] }], refusal: null };
    }
    if (tier !== undefined) object.service_tier = tier === "auto" ? "default" : tier;
    return JSON.stringify(object);
  };
  return { chunks: recording.chunks.map((chunk) => serve(chunk, "delta")), whole: serve(recording.whole, "message") };
}

function edited(answer: Recording, edit: (text: string) => string): Recording {
  return { chunks: answer.chunks.map(edit), whole: edit(answer.whole) };
}

/** The recorded turn calling `name` instead of `weather`. */
function renamed(answer: Recording, name: string): Recording {
  return edited(answer, (text) => text.replace(/"name":\s*"weather"/, `"name":${JSON.stringify(name)}`));
}

/** One exchange of recorded real traffic (charmbracelet/fantasy go-vcr cassettes under test/fixtures/cassettes, with their LICENSE and NOTICE). */
export interface Interaction {
  request: { url: string; body: string };
  response: { body: string; code: number; headers: Record<string, string[]> };
}

export function loadCassette(name: string): Interaction[] {
  return (parse(readFixture(`cassettes/${name}.yaml`)) as { interactions: Interaction[] }).interactions;
}

/** What `replay` serves for the request's model. */
async function replayModel(record: ReceivedRequest, response: ServerResponse, replay: Replay | undefined, hangUps: EventEmitter): Promise<void> {
  const { body } = record;
  const answer = (status: number, text: string) => {
    record.status = status;
    response.writeHead(status, { "content-type": "application/json" }).end(text);
  };
  if (!replay) {
    record.answer = "rejected";
    return answer(
      404,
      JSON.stringify({
        error: {
          message: `The model \`${body.model}\` does not exist or you do not have access to it.`,
          type: "invalid_request_error",
          param: null,
          code: "model_not_found",
        },
      }),
    );
  }
  if ("status" in replay) return answer(replay.status, readFixture(`chunks/${replay.file}`));
  if ("endless" in replay) {
    response.writeHead(200, { "content-type": "text/event-stream" });
    const timer = setInterval(() => response.write(`data: ${replay.endless}\n\n`), 10);
    response.once("close", () => {
      clearInterval(timer);
      hangUps.emit("hang-up");
    });
    return;
  }
  const inline = "chunks" in replay;
  if (body.stream !== true && (!inline || replay.whole !== undefined))
    return answer(200, JSON.stringify(inline ? replay.whole : fixtureJson(`${replay.name}.json`)));
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  for (const line of inline ? replay.chunks : fixtureLines(replay.name))
    if (!response.write(`data: ${line}\n\n`)) await new Promise((resolve) => response.once("drain", resolve));
  response.end("data: [DONE]\n\n");
}

function replayInteraction(record: ReceivedRequest, response: ServerResponse, recorded: Interaction | undefined): void {
  if (!recorded) {
    record.status = 500;
    response.writeHead(500, { "content-type": "application/json" }).end('{"error":{"message":"cassette has no more interactions"}}');
    return;
  }
  record.status = recorded.response.code;
  const contentType = recorded.response.headers["Content-Type"]?.[0] ?? "application/json";
  response.writeHead(recorded.response.code, { "content-type": contentType }).end(recorded.response.body);
}

import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { startEmulator, type Emulator, type Received, type Reply } from "../plugins/emulators/http-emulator.js";

/**
 * OpenAI's Responses API (`POST …/responses`,
 * https://platform.openai.com/docs/api-reference/responses/create), stateless
 * and as strict as the real one, with its exact error bodies:
 *
 * - an unknown parameter, top-level or on an input item, is 400
 *   `Unknown parameter: 'input[3].reasoning_content'.` (`unknown_parameter`);
 * - a reasoning item sent by id without its `encrypted_content` is 404
 *   "Item with id 'rs_…' not found. Items are not persisted when `store` is
 *   set to false. Try again with `store` set to true, or remove this item from
 *   your input." (https://github.com/vercel/ai/issues/7543,
 *   https://github.com/can1357/oh-my-pi/issues/41);
 * - an `encrypted_content` blob is an HMAC over its nonce and the model that
 *   issued it: a blob altered by one byte, or sent to another model, is 400
 *   `invalid_encrypted_content` "The encrypted content gAAA...Rg== could not
 *   be verified. Reason: Encrypted content could not be decrypted or parsed."
 *   (https://github.com/openai/codex/issues/8132, the reason as in
 *   https://github.com/openai/codex/issues/35334);
 * - a `function_call` item sent with the id this server gave it must follow
 *   the reasoning item of its response, else 400 "Item 'fc_…' of type
 *   'function_call' was provided without its required 'reasoning' item:
 *   'rs_…'." (https://github.com/cline/cline/issues/12242,
 *   https://github.com/continuedev/continue/issues/10018); the two ids share
 *   the response's part, as OpenAI's do. A reasoning item must be followed by
 *   another item ("Item 'rs_…' of type 'reasoning' was provided without its
 *   required following item.", https://github.com/vercel/ai/issues/7099).
 *
 * Auth is `Authorization: Bearer` or Azure's `api-key`. With `azure: true`
 * it is Azure OpenAI: the key only in `api-key` (anything else is Azure's
 * 401, https://github.com/SciSharp/BotSharp/issues/386), and the dated API
 * (`…/openai/responses`, not `…/openai/v1/responses`) only with an
 * `?api-version=` query, else Azure's 404 "Resource not found". Reasoning models
 * (o-series, gpt-5*, grok-*) answer with a reasoning item — its summary only
 * when `reasoning.summary` asks, its blob only when `include` asks — then
 * call the first offered tool `steps` times (one call per round), then
 * answer in text. Model `gpt-5-quota` answers OpenAI's 429 quota error,
 * `gpt-5-busy` its 429 rate-limit error with its headers (the body as in
 * https://github.com/openai/openai-python/issues/1303: `type` is the limited
 * quantity, `tokens` or `requests`).
 */
export interface ResponsesUpstream extends Emulator {
  /** A blob as this server issues it for `model`. */
  blobFor(model: string): string;
  /**
   * Blobs issued until now stop verifying, as they do when the API key
   * changes to another organisation (https://github.com/openai/codex/issues/8132).
   */
  switchOrganisation(): void;
}

let SECRET = randomBytes(32);
const TOP_LEVEL = new Set([
  "model",
  "input",
  "instructions",
  "store",
  "include",
  "stream",
  "stream_options",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "max_output_tokens",
  "max_tool_calls",
  "temperature",
  "top_p",
  "top_logprobs",
  "reasoning",
  "text",
  "metadata",
  "user",
  "safety_identifier",
  "prompt_cache_key",
  "prompt_cache_retention",
  "service_tier",
  "truncation",
  "previous_response_id",
  "background",
  "conversation",
  "prompt",
  // Codex sends it on every request to OpenAI (its client's metadata)
  "client_metadata",
]);
const ITEM_KEYS: Record<string, Set<string>> = {
  message: new Set(["type", "role", "content", "id", "status"]),
  reasoning: new Set(["type", "id", "summary", "content", "encrypted_content", "status"]),
  function_call: new Set(["type", "id", "call_id", "name", "arguments", "status"]),
  function_call_output: new Set(["type", "id", "call_id", "output", "status"]),
};
export const RATE_LIMIT_ERROR = {
  error: {
    message:
      "Rate limit reached for gpt-5 in organization org-emulator on tokens per min (TPM): Limit 30000, Used 29800, Requested 1200. Please try again in 2s. Visit https://platform.openai.com/account/rate-limits to learn more.",
    type: "tokens",
    param: null,
    code: "rate_limit_exceeded",
  },
};
const RATE_LIMIT_HEADERS = { "retry-after": "2", "x-ratelimit-limit-tokens": "30000", "x-ratelimit-remaining-tokens": "200" };
export const QUOTA_ERROR = {
  error: {
    message:
      "You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.",
    type: "insufficient_quota",
    param: null,
    code: "insufficient_quota",
  },
};

type Item = Record<string, unknown> & { type?: string };
type Body = Record<string, unknown>;

function error(status: number, message: string, param: string | null, code: string | null): Reply {
  return { status, json: { error: { message, type: "invalid_request_error", param, code } } };
}

const mac = (data: string) => createHmac("sha256", SECRET).update(data).digest();

export function blobFor(model: string): string {
  const nonce = randomBytes(48);
  return `gAAAAA${Buffer.concat([nonce, mac(`${model}\u0000${nonce.toString("hex")}`)]).toString("base64")}`;
}

function verifies(blob: string, model: string): boolean {
  if (!blob.startsWith("gAAAAA")) return false;
  const bytes = Buffer.from(blob.slice(6), "base64");
  if (bytes.length !== 80 || bytes.toString("base64") !== blob.slice(6)) return false;
  const expected = mac(`${model}\u0000${bytes.subarray(0, 48).toString("hex")}`);
  return timingSafeEqual(expected, bytes.subarray(48));
}

/** The reasoning item id of a response part: derived, so a stateless server can name it. */
const reasoningId = (part: string) => `rs_${part}${mac(`rs${part}`).toString("hex").slice(0, 26)}`;

export async function startOpenAIResponsesUpstream(options: { apiKey: string; steps?: number; azure?: boolean }): Promise<ResponsesUpstream> {
  const emulator = await startEmulator(
    (request) => (options.azure ? azureGate(request, options.apiKey) : undefined) ?? handle(request, options.apiKey, options.steps ?? 1),
  );
  const switchOrganisation = () => {
    SECRET = randomBytes(32);
  };
  return { ...emulator, blobFor, switchOrganisation };
}

const AZURE_DENIED =
  "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.";

/** Azure OpenAI's own refusals, before the Responses API sees the request. */
function azureGate(request: Received, apiKey: string): Reply | undefined {
  if (request.headers["api-key"] !== apiKey) return { status: 401, json: { error: { code: "401", message: AZURE_DENIED } } };
  const url = new URL(request.path, "http://azure.invalid");
  if (url.pathname === "/openai/v1/responses") return undefined;
  if (url.pathname !== "/openai/responses" || !url.searchParams.get("api-version"))
    return { status: 404, json: { error: { code: "404", message: "Resource not found" } } };
  return undefined;
}

function handle(request: Received, apiKey: string, steps: number): Reply {
  if (request.method !== "POST" || !request.path.split("?")[0]!.endsWith("/responses"))
    return {
      status: 404,
      json: { error: { message: `Invalid URL (${request.method} ${request.path})`, type: "invalid_request_error", param: null, code: null } },
    };
  const bearer = request.headers.authorization === `Bearer ${apiKey}`;
  if (!bearer && request.headers["api-key"] !== apiKey)
    return { status: 401, json: { error: { message: "Incorrect API key provided.", type: "invalid_request_error", param: null, code: "invalid_api_key" } } };
  const body = request.body;
  if (!body) return error(400, "We could not parse the JSON body of your request.", null, null);
  for (const key of Object.keys(body)) if (!TOP_LEVEL.has(key)) return error(400, `Unknown parameter: '${key}'.`, key, "unknown_parameter");
  const model = String(body.model);
  if (model === "gpt-5-quota") return { status: 429, json: QUOTA_ERROR };
  if (model === "gpt-5-busy") return { status: 429, json: RATE_LIMIT_ERROR, headers: RATE_LIMIT_HEADERS };
  const input = typeof body.input === "string" ? [{ type: "message", role: "user", content: body.input }] : (body.input as Item[]);
  const problem = checkInput(input, model, body.store !== false);
  if (problem) return problem;
  const response = answer(body, input, model, steps);
  return body.stream === true ? { status: 200, sse: stream(response) } : { status: 200, json: response };
}

function checkInput(input: Item[], model: string, stored: boolean): Reply | undefined {
  if (!Array.isArray(input) || input.length === 0) return error(400, "Invalid 'input': empty array.", "input", "empty_array");
  const seenReasoning = new Set<string>();
  for (const [i, item] of input.entries()) {
    const type = item.type ?? "message";
    const keys = ITEM_KEYS[type];
    if (!keys)
      return error(
        400,
        `Invalid value: '${type}'. Supported values are: 'message', 'reasoning', 'function_call', and 'function_call_output'.`,
        `input[${i}].type`,
        "invalid_value",
      );
    for (const key of Object.keys(item))
      if (!keys.has(key)) return error(400, `Unknown parameter: 'input[${i}].${key}'.`, `input[${i}].${key}`, "unknown_parameter");
    if (type === "reasoning") {
      const id = String(item.id);
      if (typeof item.encrypted_content !== "string") {
        if (!stored)
          return error(
            404,
            `Item with id '${id}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.`,
            "input",
            null,
          );
      } else if (!verifies(item.encrypted_content, model)) {
        const blob = item.encrypted_content;
        return error(
          400,
          `The encrypted content ${blob.slice(0, 4)}...${blob.slice(-4)} could not be verified. Reason: Encrypted content could not be decrypted or parsed.`,
          null,
          "invalid_encrypted_content",
        );
      }
      if (i === input.length - 1) return error(400, `Item '${id}' of type 'reasoning' was provided without its required following item.`, "input", null);
      seenReasoning.add(id);
    }
    if (type === "function_call" && typeof item.id === "string" && item.id.startsWith("fc_")) {
      const required = reasoningId(item.id.slice(3, 27));
      if (!seenReasoning.has(required))
        return error(400, `Item '${item.id}' of type 'function_call' was provided without its required 'reasoning' item: '${required}'.`, "input", null);
    }
  }
  return undefined;
}

function reasons(model: string): boolean {
  return /^(o\d|gpt-5|grok-)/.test(model);
}

function answer(body: Body, input: Item[], model: string, steps: number): Record<string, unknown> {
  const part = randomBytes(12).toString("hex");
  const output: Item[] = [];
  const summaryAsked = typeof (body.reasoning as Body | undefined)?.summary === "string";
  const blobAsked = Array.isArray(body.include) && body.include.includes("reasoning.encrypted_content");
  const lastUser = input.findLastIndex((item) => (item.type ?? "message") === "message" && item.role === "user");
  const rounds = input.slice(lastUser + 1).filter((item) => item.type === "function_call_output").length;
  const tool = (body.tools as Body[] | undefined)?.find((entry) => entry.type === "function");
  const calling = tool !== undefined && rounds < steps;
  if (reasons(model)) {
    const reasoning: Item = {
      id: reasoningId(part),
      type: "reasoning",
      summary: summaryAsked
        ? [{ type: "summary_text", text: calling ? "**Choosing a tool**\n\nI should look it up." : "**Answering**\n\nThe result is in." }]
        : [],
    };
    if (blobAsked) reasoning.encrypted_content = blobFor(model);
    output.push(reasoning);
  }
  if (calling) {
    output.push({
      id: `fc_${part}${randomBytes(13).toString("hex")}`,
      type: "function_call",
      status: "completed",
      arguments: JSON.stringify({ location: "Paris" }),
      call_id: `call_${randomBytes(12).toString("hex")}`,
      name: tool.name,
    });
  } else {
    output.push({
      id: `msg_${part}${randomBytes(13).toString("hex")}`,
      type: "message",
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", annotations: [], logprobs: [], text: `Done after ${rounds} tool round(s).` }],
    });
  }
  return {
    id: `resp_${part}`,
    object: "response",
    created_at: Math.floor(Date.now() / 1000),
    status: "completed",
    model,
    output,
    store: false,
    usage: {
      input_tokens: 40,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 20,
      output_tokens_details: { reasoning_tokens: 12 },
      total_tokens: 60,
    },
  };
}

/** The response as the Responses API streams it: the same item, event by event, each with its sequence number. */
function stream(response: Record<string, unknown>): string {
  const events: Record<string, unknown>[] = [];
  const opening = { ...response, status: "in_progress", output: [], usage: null };
  events.push({ type: "response.created", response: opening }, { type: "response.in_progress", response: opening });
  (response.output as Item[]).forEach((item, output_index) => {
    const item_id = item.id;
    if (item.type === "reasoning") {
      events.push({ type: "response.output_item.added", output_index, item: { ...item, summary: [], encrypted_content: undefined } });
      (item.summary as { text: string }[]).forEach(({ text }, summary_index) => {
        events.push({ type: "response.reasoning_summary_part.added", item_id, output_index, summary_index, part: { type: "summary_text", text: "" } });
        for (const delta of pieces(text)) events.push({ type: "response.reasoning_summary_text.delta", item_id, output_index, summary_index, delta });
        events.push({ type: "response.reasoning_summary_text.done", item_id, output_index, summary_index, text });
        events.push({ type: "response.reasoning_summary_part.done", item_id, output_index, summary_index, part: { type: "summary_text", text } });
      });
    } else if (item.type === "function_call") {
      events.push({ type: "response.output_item.added", output_index, item: { ...item, arguments: "", status: "in_progress" } });
      for (const delta of pieces(String(item.arguments))) events.push({ type: "response.function_call_arguments.delta", item_id, output_index, delta });
      events.push({ type: "response.function_call_arguments.done", item_id, output_index, arguments: item.arguments });
    } else {
      const text = (item.content as { text: string }[])[0]!.text;
      events.push({ type: "response.output_item.added", output_index, item: { ...item, content: [], status: "in_progress" } });
      events.push({ type: "response.content_part.added", item_id, output_index, content_index: 0, part: { type: "output_text", annotations: [], text: "" } });
      for (const delta of pieces(text)) events.push({ type: "response.output_text.delta", item_id, output_index, content_index: 0, delta, logprobs: [] });
      events.push({ type: "response.output_text.done", item_id, output_index, content_index: 0, text, logprobs: [] });
      events.push({ type: "response.content_part.done", item_id, output_index, content_index: 0, part: { type: "output_text", annotations: [], text } });
    }
    events.push({ type: "response.output_item.done", output_index, item });
  });
  events.push({ type: "response.completed", response });
  return events.map((event, sequence_number) => `event: ${String(event.type)}\ndata: ${JSON.stringify({ ...event, sequence_number })}\n\n`).join("");
}

function pieces(text: string): string[] {
  return text.match(/.{1,8}/gs) ?? [];
}

import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A loopback emulator of OpenRouter's chat completions with the
 * `reasoning_details` types it returns per model family
 * (https://openrouter.ai/docs/use-cases/reasoning-tokens#reasoning-details;
 * the types as its SDK declares them,
 * https://github.com/OpenRouterTeam/ai-sdk-provider/blob/main/src/schemas/reasoning-details.ts):
 *
 * - `anthropic/…` (format `anthropic-claude-v1`): one `reasoning.text` with
 *   its `signature`. A changed or missing block is Anthropic's refusal, passed
 *   on in OpenRouter's wrapper ("Provider returned error", `metadata.raw`):
 *   "Invalid `signature` in `thinking` block" or "Expected `thinking` or
 *   `redacted_thinking`, but found `tool_use`…" for the current tool loop's
 *   turn (https://docs.claude.com/en/docs/build-with-claude/extended-thinking).
 * - `openai/…` (format `openai-responses-v1`): a `reasoning.summary` and the
 *   `reasoning.encrypted` blob, both with the reasoning item's `rs_` id and,
 *   as OpenRouter streams them, the same `index`. A changed blob is refused in
 *   the wrapper; no public text of OpenAI's for it was found, so the raw
 *   message here is only the wrapper's own.
 * - `google/…` (format `google-gemini-v1`): a `reasoning.text` and one
 *   `reasoning.encrypted` per function call whose `id` is that tool call's id
 *   (the thought signature). The current step's first call without its
 *   signature is Gemini's refusal: "Function call is missing a
 *   thought_signature in functionCall parts. …"
 *   (https://ai.google.dev/gemini-api/docs/thought-signatures).
 *
 * Streamed, the details arrive in fragments merged by `index`: text and
 * summary in two pieces, Claude's signature alone after its text, each
 * encrypted item whole. Every request is recorded with the formats of the
 * details it carried (`formats`), so a test sees a foreign family's carrier.
 */

type Detail = Record<string, unknown> & { type: string; format: string; index: number };
type Call = { id: string; name: string; arguments: string };
type Body = { model: string; messages: Record<string, unknown>[]; stream?: boolean; tools?: unknown[] };

export interface RouterRequest {
  readonly body: Body;
  status: number;
  /** The `format` of every detail on the request's assistant messages. */
  readonly formats: string[];
}

export interface OpenRouterEmulator {
  readonly baseUrl: string;
  readonly received: RouterRequest[];
  /** The details issued with the turn that made this tool call (or answered this text). */
  issuedFor(key: string): Detail[] | undefined;
  close(): Promise<void>;
}

export const FORMATS: Record<string, string> = { anthropic: "anthropic-claude-v1", openai: "openai-responses-v1", google: "google-gemini-v1" };

export async function startOpenRouterDetails(): Promise<OpenRouterEmulator> {
  const received: RouterRequest[] = [];
  const issued = new Map<string, Detail[]>(); // by tool-call id, or `text:<content>`
  let counter = 0;
  const server = createServer((request, response) => {
    let raw = "";
    request.setEncoding("utf8");
    request.on("data", (chunk: string) => (raw += chunk));
    request.on("end", () => {
      const body = JSON.parse(raw) as Body;
      const family = body.model.split("/")[0] ?? "";
      const formats = body.messages.flatMap((message) =>
        Array.isArray(message.reasoning_details) ? (message.reasoning_details as Detail[]).map((detail) => detail.format) : [],
      );
      const record: RouterRequest = { body, status: 200, formats };
      received.push(record);
      const refusal = check(family, body, issued);
      if (refusal) {
        record.status = 400;
        return response.writeHead(400, { "content-type": "application/json" }).end(refusal);
      }
      const n = ++counter;
      const reasoning = `Thought ${n} of ${family}.`;
      const last = body.messages.at(-1);
      const calls: Call[] =
        (body.tools?.length ?? 0) > 0 && last?.role === "user"
          ? Array.from({ length: family === "google" ? 2 : 1 }, (_, i) => ({ id: `tool_${n}_${i}`, name: "weather", arguments: `{"city":"C${i}"}` }))
          : [];
      const content = calls.length > 0 ? null : `Answer ${n}.`;
      const details = detailsFor(family, n, reasoning, calls);
      if (calls.length > 0) for (const call of calls) issued.set(call.id, details);
      else issued.set(`text:${content}`, details);
      if (body.stream) return stream(response, body.model, reasoning, details, content, calls);
      const message: Record<string, unknown> = { role: "assistant", content, reasoning, reasoning_details: details };
      if (calls.length > 0)
        message.tool_calls = calls.map((call) => ({ id: call.id, type: "function", function: { name: call.name, arguments: call.arguments } }));
      response.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({
          id: `gen-${n}`,
          object: "chat.completion",
          created: 1_700_000_000,
          model: body.model,
          choices: [{ index: 0, message, finish_reason: calls.length > 0 ? "tool_calls" : "stop" }],
          usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl: `${url}/api/v1`,
    received,
    issuedFor: (key) => issued.get(key),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function detailsFor(family: string, n: number, reasoning: string, calls: Call[]): Detail[] {
  const format = FORMATS[family] ?? "unknown";
  if (family === "anthropic") return [{ type: "reasoning.text", text: reasoning, signature: `EqQB${n}Ck+/sig==`, format, index: 0 }];
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

function wrapped(provider: string, raw: string): string {
  return JSON.stringify({ error: { message: "Provider returned error", code: 400, metadata: { raw, provider_name: provider } } });
}

function check(family: string, body: Body, issued: Map<string, Detail[]>): string | undefined {
  const lastUser = body.messages.findLastIndex((message) => message.role === "user");
  for (const [index, message] of body.messages.entries()) {
    if (message.role !== "assistant") continue;
    const calls = (message.tool_calls as { id: string; function: { name: string } }[] | undefined) ?? [];
    const expected = calls.length > 0 ? issued.get(calls[0]!.id) : issued.get(`text:${String(message.content)}`);
    const sent = message.reasoning_details as Detail[] | undefined;
    const own = expected && expected[0]?.format === FORMATS[family];
    if (sent && own && canonical(sent) !== canonical(expected)) {
      if (family === "anthropic")
        return wrapped(
          "Anthropic",
          JSON.stringify({
            type: "error",
            error: { type: "invalid_request_error", message: `messages.${index}.content.0: Invalid \`signature\` in \`thinking\` block` },
          }),
        );
      if (family === "openai") return wrapped("OpenAI", "");
    }
    if (index <= lastUser || calls.length === 0 || !own) continue;
    // the current tool loop's own turns must carry what was issued for them
    if (family === "anthropic" && !sent?.some((detail) => detail.type === "reasoning.text" && typeof detail.signature === "string"))
      return wrapped(
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
      return wrapped(
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

function stream(response: ServerResponse, model: string, reasoning: string, details: Detail[], content: string | null, calls: Call[]): void {
  response.writeHead(200, { "content-type": "text/event-stream" });
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: "gen-stream", object: "chat.completion.chunk", created: 1_700_000_000, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const out = [chunk({ role: "assistant", content: "" }), chunk({ reasoning })];
  for (const detail of details) {
    if (detail.type === "reasoning.encrypted") out.push(chunk({ reasoning_details: [detail] }));
    else {
      const key = detail.type === "reasoning.summary" ? "summary" : "text";
      const { signature, ...unsigned } = detail;
      const whole = String(detail[key]);
      out.push(
        chunk({ reasoning_details: [{ ...unsigned, [key]: whole.slice(0, 4) }] }),
        chunk({ reasoning_details: [{ ...unsigned, [key]: whole.slice(4) }] }),
      );
      if (signature !== undefined) out.push(chunk({ reasoning_details: [{ type: detail.type, signature, format: detail.format, index: detail.index }] }));
    }
  }
  if (content) out.push(chunk({ content }));
  calls.forEach((call, index) => {
    out.push(chunk({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] }));
    out.push(chunk({ tool_calls: [{ index, function: { arguments: call.arguments } }] }));
  });
  out.push(chunk({}, calls.length > 0 ? "tool_calls" : "stop"), "data: [DONE]\n\n");
  response.end(out.join(""));
}

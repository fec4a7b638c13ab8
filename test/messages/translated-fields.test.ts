import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, test } from "vitest";
import { captureLog } from "../support/captured-log.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";

/**
 * A Messages client on an OpenAI-compatible route (docs/api.md#what-maps-to-what):
 * what has no equivalent on the target is folded where the target can still
 * say it. The upstream is a vLLM-like host: it names the stop string that
 * ended an answer in `choices[].stop_reason`, as vLLM and SGLang do.
 */

type Body = { stream?: boolean; stop?: string[]; messages: { role: string; content: unknown; tool_call_id?: string }[] };

let server: Server;
let baseUrl: string;
const received: Body[] = [];
let gateway: TestGateway;
const log = captureLog();

beforeAll(async () => {
  server = createServer((request, response) => {
    let raw = "";
    request.on("data", (part: Buffer) => (raw += part.toString("utf8")));
    request.on("end", () => {
      const body = JSON.parse(raw) as Body;
      received.push(body);
      const matched = body.stop?.[1];
      const choice = { index: 0, finish_reason: "stop", stop_reason: matched ?? null };
      if (!body.stream) {
        response.writeHead(200, { "content-type": "application/json" });
        response.end(
          JSON.stringify({
            id: "cmpl-1",
            object: "chat.completion",
            created: 1,
            model: "qwen3",
            choices: [{ ...choice, message: { role: "assistant", content: "one, two", reasoning_content: "Counting." } }],
          }),
        );
        return;
      }
      const chunk = (choiceFields: object) =>
        `data: ${JSON.stringify({ id: "cmpl-1", object: "chat.completion.chunk", created: 1, model: "qwen3", choices: [choiceFields] })}\n\n`;
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write(chunk({ index: 0, delta: { role: "assistant", reasoning_content: "Counting." }, finish_reason: null }));
      response.write(chunk({ index: 0, delta: { content: "one, two" }, finish_reason: null }));
      response.write(chunk({ ...choice, delta: {} }));
      response.end("data: [DONE]\n\n");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  gateway = await startTestGateway({
    routes: `version: 1
providers:
  local: { plugin: openai-compatible, base_url: "${baseUrl}" }
models:
  - { name: qwen3, provider: local, model: qwen3 }
carriers:
  - match: {}
    fields: [reasoning_content]
`,
    log: log.logger,
  });
});
afterAll(async () => {
  await gateway?.stop();
  server?.closeAllConnections();
  await new Promise<void>((resolve) => server?.close(() => resolve()));
});

async function messages(body: Record<string, unknown>): Promise<Response> {
  const response = await fetch(`${gateway.url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": gateway.key, "anthropic-version": "2023-06-01" },
    body: JSON.stringify({ model: "qwen3", max_tokens: 256, ...body }),
  });
  expect(response.status).toBe(200);
  return response;
}

test("the stop sequence the upstream names is the answer's stop_sequence, whole and streamed", async () => {
  const ask = { stop_sequences: ["</a>", "three"], messages: [{ role: "user", content: "count" }] };
  const whole = (await (await messages(ask)).json()) as { stop_reason: string; stop_sequence: string | null };
  expect(whole).toMatchObject({ stop_reason: "stop_sequence", stop_sequence: "three" });
  expect(received.at(-1)!.stop).toEqual(["</a>", "three"]);
  const raw = await (await messages({ ...ask, stream: true })).text();
  const delta = raw.split("\n").find((line) => line.includes('"message_delta"'))!;
  expect(JSON.parse(delta.slice(6))).toMatchObject({ delta: { stop_reason: "stop_sequence", stop_sequence: "three" } });
  // without a named sequence the answer simply ended
  const plain = (await (await messages({ messages: [{ role: "user", content: "count" }] })).json()) as { stop_reason: string; stop_sequence: string | null };
  expect(plain).toMatchObject({ stop_reason: "end_turn", stop_sequence: null });
});

test("a tool result's is_error is folded into the tool message's text; a system message stays in its place", async () => {
  await messages({
    messages: [
      { role: "user", content: "run it" },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "run", input: {} }] },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_1", is_error: true, content: "permission denied" },
          { type: "text", text: "what now?" },
        ],
      },
      { role: "system", content: "Be brief." },
    ],
  });
  const sent = received.at(-1)!.messages;
  expect(sent.map((message) => message.role)).toEqual(["user", "assistant", "tool", "user", "system"]);
  expect(sent[2]).toMatchObject({ role: "tool", tool_call_id: "toolu_1", content: "Error: permission denied" });
  expect(sent[4]).toMatchObject({ role: "system", content: "Be brief." });
});

test("a field the route's target has no equivalent for is dropped, never refused, with one log line per route and field", async () => {
  const extra = { top_k: 5, context_management: { edits: [] }, metadata: { user_id: "u-1" }, messages: [{ role: "user", content: "count" }] };
  await messages(extra);
  await messages(extra);
  const sent = received.at(-1)! as Record<string, unknown>;
  for (const key of ["top_k", "context_management", "metadata"]) expect(sent).not.toHaveProperty(key);
  const said = log.lines.filter((line) => line.object.door === "messages" && line.object.route === "qwen3").map((line) => line.object.field);
  expect(said.sort()).toEqual(["context_management", "metadata", "top_k"]);
});

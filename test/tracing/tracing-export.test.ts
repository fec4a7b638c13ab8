import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startTestGateway } from "../support/gateway.js";
import { startOpenAIUpstream, type OpenAIUpstream } from "../support/openai-upstream.js";
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from "./otlp-receiver.js";

/**
 * With an OTLP endpoint set, a gateway exports a span per request with the
 * GenAI conventions' attributes and carrierd's replay decision, child spans
 * for the store read, each upstream attempt (the unknown-field retry a second
 * one) and the commit, continues the client's traceparent and passes it on
 * upstream; and the GenAI metrics. Received by a real OTLP/HTTP receiver in
 * both encodings (protobuf decoded with protobufjs against the OTLP schema).
 */
const CLIENT_PARENT = "00f067aa0ba902b7";
const SPAN_KIND = { INTERNAL: 1, SERVER: 2, CLIENT: 3 };

let upstream: OpenAIUpstream;
beforeAll(async () => {
  upstream = await startOpenAIUpstream();
});
afterAll(async () => {
  await upstream.close();
});

function routes(): string {
  return `version: 1
providers:
  cerebras: { plugin: openai-compatible, base_url: "${upstream.baseUrl("cerebras")}" }
models:
  - { name: "cerebras/*", provider: cerebras }
carriers:
  - match: {}
    fields: [reasoning_content]
`;
}

interface Conversation {
  readonly spans: ReceivedSpan[];
  readonly receiver: OtlpReceiver;
  readonly prompt: string;
  readonly reasoning: string;
  /** The trace id of the client's traceparent on the second request. */
  readonly clientTrace: string;
}

/**
 * Two turns against an upstream that refuses `reasoning_content` (Cerebras'
 * phrasing): the second resends the first answer, carrierd attaches its
 * reasoning, is refused, records the verdict and retries without it. The
 * gateway is stopped before the receiver is read: what was buffered is
 * exported on the way out.
 */
async function converse(env: Record<string, string>): Promise<Conversation> {
  const receiver = await startOtlpReceiver();
  const gateway = await startTestGateway({ routes: routes(), env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, ...env } });
  const prompt = `what is ${Math.random()}?`;
  const model = "cerebras/model-a";
  let reasoning = "";
  const clientTrace = randomBytes(16).toString("hex");
  try {
    const first = await gateway.post("/v1/chat/completions", { model, messages: [{ role: "user", content: prompt }] });
    expect(first.status).toBe(200);
    const answer = ((await first.json()) as { choices: { message: { content: string; reasoning?: string } }[] }).choices[0]!.message;
    // the carried answer is the upstream's: Cerebras puts reasoning in `reasoning`
    reasoning = answer.reasoning ?? "";
    const second = await gateway.post(
      "/v1/chat/completions",
      {
        model,
        stream: true,
        messages: [
          { role: "user", content: prompt },
          { role: "assistant", content: answer.content },
          { role: "user", content: "and then?" },
        ],
      },
      { traceparent: `00-${clientTrace}-${CLIENT_PARENT}-01` },
    );
    expect(second.status).toBe(200);
    await second.text();
  } finally {
    await gateway.stop();
  }
  return { spans: receiver.spans(), receiver, prompt, reasoning, clientTrace };
}

describe.each(["http/json", "http/protobuf"])("OTEL_EXPORTER_OTLP_PROTOCOL=%s", (protocol) => {
  let conversation: Conversation;
  beforeAll(async () => {
    conversation = await converse({
      OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
      OTEL_RESOURCE_ATTRIBUTES: "deployment.environment.name=test,team=infra%20ops",
      OTEL_EXPORTER_OTLP_HEADERS: "x-tenant=acme",
    });
  });
  afterAll(async () => {
    await conversation.receiver.close();
  });

  test("exports to /v1/traces and /v1/metrics in the protocol's content type, with the configured headers", () => {
    const paths = new Set(conversation.receiver.received.map((item) => item.path));
    expect(paths).toEqual(new Set(["/v1/traces", "/v1/metrics"]));
    for (const item of conversation.receiver.received) {
      expect(item.contentType).toBe(protocol === "http/json" ? "application/json" : "application/x-protobuf");
      expect(item.headers["x-tenant"]).toBe("acme");
    }
  });

  test("a server span per chat request, named for the model, with the GenAI attributes and the resource", () => {
    const servers = conversation.spans.filter((span) => span.kind === SPAN_KIND.SERVER);
    expect(servers.map((span) => span.name)).toEqual(["chat cerebras/model-a", "chat cerebras/model-a"]);
    const [first] = servers;
    expect(first!.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "cerebras",
      "gen_ai.request.model": "cerebras/model-a",
      "gen_ai.response.model": "model-a",
      "gen_ai.response.finish_reasons": ["stop"],
      "http.route": "/v1/chat/completions",
      "http.response.status_code": 200,
    });
    expect(first!.attributes["gen_ai.usage.input_tokens"]).toBeGreaterThan(0);
    expect(first!.attributes["gen_ai.usage.output_tokens"]).toBeGreaterThan(0);
    expect(first!.resource).toMatchObject({ "service.name": "carrierd", "deployment.environment.name": "test", team: "infra ops" });
  });

  test("the store read, each upstream attempt and the commit are children of the request's span", () => {
    const [first, second] = conversation.spans.filter((span) => span.kind === SPAN_KIND.SERVER);
    const children = (parent: ReceivedSpan) => conversation.spans.filter((span) => span.parentSpanId === parent.spanId).map((span) => span.name);
    expect(children(first!).sort()).toEqual(["carrierd.store.commit", "carrierd.store.read", "chat model-a"]);
    expect(children(second!).sort()).toEqual(["carrierd.store.commit", "carrierd.store.read", "chat model-a", "chat model-a"]);
  });

  test("the unknown-field retry is a second attempt span saying why; the refused one is an error", () => {
    const second = conversation.spans.filter((span) => span.kind === SPAN_KIND.SERVER)[1]!;
    const attempts = conversation.spans.filter((span) => span.kind === SPAN_KIND.CLIENT && span.parentSpanId === second.spanId);
    expect(attempts.map((span) => span.attributes["carrierd.upstream.attempt"]).sort()).toEqual([1, 2]);
    const refused = attempts.find((span) => span.attributes["carrierd.upstream.attempt"] === 1)!;
    const retry = attempts.find((span) => span.attributes["carrierd.upstream.attempt"] === 2)!;
    expect(refused.attributes).toMatchObject({ "http.response.status_code": 400, "error.type": "unknown_field", "gen_ai.provider.name": "cerebras" });
    expect(refused.statusCode).toBe(2); // STATUS_CODE_ERROR
    expect(retry.attributes).toMatchObject({ "carrierd.retry.reason": "unknown_field", "carrierd.retry.dropped_fields": ["reasoning_content"] });
    expect(second.attributes).toMatchObject({
      "carrierd.replay.turns_matched": 1,
      "carrierd.replay.fields_attached": ["reasoning_content"],
      "carrierd.replay.verdict_applied": false,
    });
  });

  test("the client's traceparent is continued, and each attempt's is passed on upstream", () => {
    const second = conversation.spans.filter((span) => span.kind === SPAN_KIND.SERVER)[1]!;
    const { clientTrace } = conversation;
    expect(second.traceId).toBe(clientTrace);
    expect(second.parentSpanId).toBe(CLIENT_PARENT);
    const attempts = conversation.spans.filter((span) => span.kind === SPAN_KIND.CLIENT && span.parentSpanId === second.spanId);
    const sent = upstream
      .requestsFor("cerebras")
      .map((request) => request.headers.traceparent)
      .filter((header) => typeof header === "string" && header.includes(clientTrace));
    expect(sent.sort()).toEqual(attempts.map((span) => `00-${clientTrace}-${span.spanId}-01`).sort());
  });

  test("the GenAI metrics: operation duration, token usage, time to first token", () => {
    const metrics = conversation.receiver.metrics();
    const duration = metrics.get("gen_ai.client.operation.duration") ?? [];
    expect(duration.reduce((sum, point) => sum + (point.count ?? 0), 0)).toBe(2);
    expect(duration[0]!.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "cerebras",
      "gen_ai.request.model": "cerebras/model-a",
    });
    const tokens = metrics.get("gen_ai.client.token.usage") ?? [];
    expect(new Set(tokens.map((point) => point.attributes["gen_ai.token.type"]))).toEqual(new Set(["input", "output"]));
    for (const name of ["gen_ai.client.operation.time_to_first_chunk", "gen_ai.server.time_to_first_token"])
      expect(
        (metrics.get(name) ?? []).reduce((sum, point) => sum + (point.count ?? 0), 0),
        name,
      ).toBe(2);
  });

  test("no message content or reasoning is exported without the opt-in", () => {
    const exported = JSON.stringify(conversation.spans);
    expect(conversation.reasoning.length).toBeGreaterThan(0);
    expect(exported).not.toContain(conversation.prompt);
    expect(exported).not.toContain(conversation.reasoning);
    expect(exported).not.toContain("gen_ai.input.messages");
  });
});

test("with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true the messages, the answer and its reasoning are on the span", async () => {
  const conversation = await converse({ OTEL_EXPORTER_OTLP_PROTOCOL: "http/json", OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "true" });
  await conversation.receiver.close();
  const first = conversation.spans.find((span) => span.kind === SPAN_KIND.SERVER)!;
  const input = JSON.parse(String(first.attributes["gen_ai.input.messages"])) as unknown[];
  expect(input).toEqual([{ role: "user", parts: [{ type: "text", content: conversation.prompt }] }]);
  const output = JSON.parse(String(first.attributes["gen_ai.output.messages"])) as { role: string; parts: { type: string; content: string }[] }[];
  expect(output[0]!.role).toBe("assistant");
  expect(output[0]!.parts.find((part) => part.type === "reasoning")?.content).toBe(conversation.reasoning);
});

test("a request that is no chat turn, or is refused before one, has a span named by its method and route", async () => {
  const receiver = await startOtlpReceiver();
  const gateway = await startTestGateway({ routes: routes(), env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" } });
  try {
    expect((await gateway.fetch("/v1/models")).status).toBe(200);
    const refused = await gateway.post("/v1/chat/completions", { model: "nowhere/model", messages: [{ role: "user", content: "hi" }] });
    expect(refused.status).toBe(404);
  } finally {
    await gateway.stop();
    await receiver.close();
  }
  const servers = receiver.spans().filter((span) => span.kind === SPAN_KIND.SERVER);
  expect(servers.map((span) => [span.name, span.attributes["http.response.status_code"]])).toEqual([
    ["GET /v1/models", 200],
    ["POST /v1/chat/completions", 404],
  ]);
  // a client's mistake is no error of carrierd's
  expect(servers.map((span) => span.statusCode)).toEqual([0, 0]);
});

test("a collector that is down costs the requests nothing: they are answered, and the gateway stops", async () => {
  const gone = await startOtlpReceiver();
  await gone.close(); // its port now refuses connections
  const gateway = await startTestGateway({ routes: routes(), env: { OTEL_EXPORTER_OTLP_ENDPOINT: gone.url } });
  try {
    const answer = await gateway.post("/v1/chat/completions", { model: "cerebras/model-a", messages: [{ role: "user", content: "still there?" }] });
    expect(answer.status).toBe(200);
  } finally {
    await gateway.stop();
  }
});

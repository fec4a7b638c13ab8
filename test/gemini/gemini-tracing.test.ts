import { expect, test } from "vitest";
import { DEMO_ROUTES, startTestGateway } from "../support/gateway.js";
import { startOtlpReceiver } from "../tracing/otlp-receiver.js";

const SERVER = 2;

/** A Gemini request is traced as every chat request is: a server span named for its model, the row's path as its route, its store read, upstream call and commit as children. */
test("a Gemini door request exports its chat span with the GenAI attributes", async () => {
  const receiver = await startOtlpReceiver();
  const gateway = await startTestGateway({ routes: DEMO_ROUTES, env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" } });
  try {
    const answer = await fetch(`${gateway.url}/v1beta/models/demo:streamGenerateContent?alt=sse`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-goog-api-key": gateway.key },
      body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "What is 2+3?" }] }] }),
    });
    expect(answer.status).toBe(200);
    await answer.text();
  } finally {
    await gateway.stop(); // what was buffered is exported on the way out
    await receiver.close();
  }
  const spans = receiver.spans();
  const server = spans.find((span) => span.kind === SERVER)!;
  expect(server.name).toBe("chat demo");
  expect(server.attributes).toMatchObject({
    "gen_ai.operation.name": "chat",
    "gen_ai.request.model": "demo",
    "http.route": "/v1beta/models/{model}:streamGenerateContent",
    "http.response.status_code": 200,
  });
  const children = spans.filter((span) => span.parentSpanId === server.spanId).map((span) => span.name);
  expect(children).toEqual(expect.arrayContaining(["carrierd.store.read", "carrierd.store.commit"]));
});

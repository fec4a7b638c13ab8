// An OpenAI-style reasoning upstream that answers instantly, for benchmarks.
// Non-streaming: one JSON body. Streaming: REASONING_CHUNKS reasoning deltas,
// then CONTENT_CHUNKS content deltas, finish + usage, [DONE] — written at once
// unless HOLD_MS is set (then the stream stays open that long: for the RSS test).
import { createServer } from "node:http";

const port = Number(process.env.PORT ?? 0);
const reasoningChunks = Number(process.env.REASONING_CHUNKS ?? 40);
const contentChunks = Number(process.env.CONTENT_CHUNKS ?? 20);
const holdMs = Number(process.env.HOLD_MS ?? 0);

function chunk(id, delta, finish = null) {
  return `data: {"id":"${id}","object":"chat.completion.chunk","created":1764661832,"model":"bench-reasoner","choices":[{"index":0,"delta":${delta},"logprobs":null,"finish_reason":${finish ? `"${finish}"` : "null"}}]}\n\n`;
}

const server = createServer((request, response) => {
  const parts = [];
  request.on("data", (part) => parts.push(part));
  request.on("end", () => {
    let body;
    try {
      body = JSON.parse(Buffer.concat(parts).toString("utf8"));
    } catch {
      response.writeHead(400, { "content-type": "application/json" }).end('{"error":{"message":"bad json","type":"invalid_request_error"}}');
      return;
    }
    const turn = (body.messages ?? []).filter((message) => message.role === "assistant").length;
    const id = `bench-${turn}`;
    const reasoning = Array.from({ length: reasoningChunks }, (_, i) => ` think${turn}.${i}`);
    const content = Array.from({ length: contentChunks }, (_, i) => ` word${turn}.${i}`);
    const usage = { prompt_tokens: 100, completion_tokens: reasoningChunks + contentChunks, total_tokens: 100 + reasoningChunks + contentChunks, completion_tokens_details: { reasoning_tokens: reasoningChunks } };
    if (!body.stream) {
      const text = JSON.stringify({ id, object: "chat.completion", created: 1764661832, model: "bench-reasoner", choices: [{ index: 0, message: { role: "assistant", content: content.join(""), reasoning_content: reasoning.join("") }, finish_reason: "stop" }], usage });
      response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) }).end(text);
      return;
    }
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    let out = chunk(id, '{"role":"assistant","content":null,"reasoning_content":""}');
    for (const piece of reasoning) out += chunk(id, `{"reasoning_content":"${piece}"}`);
    for (const piece of content) out += chunk(id, `{"content":"${piece}"}`);
    out += chunk(id, "{}", "stop");
    out += `data: {"id":"${id}","object":"chat.completion.chunk","created":1764661832,"model":"bench-reasoner","choices":[],"usage":${JSON.stringify(usage)}}\n\n`;
    if (holdMs > 0) {
      // first reasoning delta now, the rest after HOLD_MS: keeps the stream open
      const first = chunk(id, '{"role":"assistant","content":null,"reasoning_content":"hold"}');
      response.write(first);
      setTimeout(() => response.end(`${out}data: [DONE]\n\n`), holdMs);
      return;
    }
    response.end(`${out}data: [DONE]\n\n`);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(port, "127.0.0.1", () => process.stdout.write(`listening ${server.address().port}\n`));

// An OpenAI-style reasoning upstream that answers instantly, for benchmarks.
// Non-streaming: one JSON body. Streaming: REASONING_CHUNKS reasoning deltas,
// then CONTENT_CHUNKS content deltas, finish + usage, [DONE] — written at once,
// like a cache hit. Paced instead, like a model that thinks: for a model whose
// name ends in "-paced", or for every request when HOLD_MS is set (the RSS
// test's open streams), the first reasoning delta leaves at once and the rest
// HOLD_MS later, or 25–75 ms later (PACE_MS 50, ± half): streams that all took
// the same time would keep their clients in step, each next request arriving
// in a burst with the others as no real users' do. A model whose name ends in
// "-repeat" answers the same text every turn.
import { createServer } from "node:http";
import { answerResponses } from "./responses-upstream.mjs";

const port = Number(process.env.PORT ?? 0);
const reasoningChunks = Number(process.env.REASONING_CHUNKS ?? 40);
const contentChunks = Number(process.env.CONTENT_CHUNKS ?? 20);
const holdMs = Number(process.env.HOLD_MS ?? 0);
const paceMs = Number(process.env.PACE_MS ?? 50);

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
    // the Responses API (the openai-responses plugin's benchmark, bench/responses.mjs)
    if (request.url.endsWith("/responses")) return answerResponses(body, response, { reasoningChunks, contentChunks });
    const turn = (body.messages ?? []).filter((message) => message.role === "assistant").length;
    const id = `bench-${turn}`;
    // a model whose name ends in "-repeat" gives the same answer every turn (the soak's repeated-answer mode)
    const said = String(body.model).endsWith("-repeat") ? 0 : turn;
    const reasoning = Array.from({ length: reasoningChunks }, (_, i) => ` think${said}.${i}`);
    const content = Array.from({ length: contentChunks }, (_, i) => ` word${said}.${i}`);
    const usage = {
      prompt_tokens: 100,
      completion_tokens: reasoningChunks + contentChunks,
      total_tokens: 100 + reasoningChunks + contentChunks,
      completion_tokens_details: { reasoning_tokens: reasoningChunks },
    };
    if (!body.stream) {
      const text = JSON.stringify({
        id,
        object: "chat.completion",
        created: 1764661832,
        model: "bench-reasoner",
        choices: [{ index: 0, message: { role: "assistant", content: content.join(""), reasoning_content: reasoning.join("") }, finish_reason: "stop" }],
        usage,
      });
      response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) }).end(text);
      return;
    }
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const first = chunk(id, '{"role":"assistant","content":null,"reasoning_content":""}') + chunk(id, `{"reasoning_content":"${reasoning[0]}"}`);
    let rest = "";
    for (const piece of reasoning.slice(1)) rest += chunk(id, `{"reasoning_content":"${piece}"}`);
    for (const piece of content) rest += chunk(id, `{"content":"${piece}"}`);
    rest += chunk(id, "{}", "stop");
    rest += `data: {"id":"${id}","object":"chat.completion.chunk","created":1764661832,"model":"bench-reasoner","choices":[],"usage":${JSON.stringify(usage)}}\n\n`;
    const waitMs = holdMs > 0 ? holdMs : String(body.model).endsWith("-paced") ? paceMs * (0.5 + Math.random()) : 0;
    if (waitMs > 0) {
      response.write(first);
      setTimeout(() => response.end(`${rest}data: [DONE]\n\n`), waitMs);
      return;
    }
    response.end(`${first}${rest}data: [DONE]\n\n`);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(port, "127.0.0.1", () => process.stdout.write(`listening ${server.address().port}\n`));

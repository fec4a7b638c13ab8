// How long each door holds the answer's first text: the time from the
// upstream writing its first content chunk to the client reading its first
// text delta, per door and route, with and without
// `include: ["reasoning.encrypted_content"]` on the Responses door. The
// upstream (in this process, so both ends read one clock) reasons for a
// moment, then streams its text over about 2 s; on the `late` route its
// `reasoning_details` come only with its last chunk, as OpenRouter's do.
//   node bench/live-first-text.mjs [SAMPLES] [CHECKOUT]
// Prints one line per door and route: the median and the worst of SAMPLES, in ms.
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startPinned, stop } from "./processes.mjs";

const [samplesText = "7", checkout = fileURLToPath(new URL("..", import.meta.url))] = process.argv.slice(2);
const SAMPLES = Number(samplesText);
const KEY = "bench-key-0123456789";
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

let firstContentAt = 0;
const upstream = createServer((request, response) => {
  let raw = "";
  request.on("data", (part) => (raw += part));
  request.on("end", async () => {
    const body = JSON.parse(raw);
    const chunk = (delta, finish = null, extra = {}) =>
      response.write(
        `data: ${JSON.stringify({ id: "gen-1", object: "chat.completion.chunk", created: 1, model: body.model, choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`,
      );
    response.writeHead(200, { "content-type": "text/event-stream" });
    for (let i = 0; i < 10; i++) {
      chunk({ reasoning_content: `step ${i} of the reasoning. ` });
      await sleep(10);
    }
    for (let i = 0; i < 20; i++) {
      if (i === 0) firstContentAt = performance.now();
      chunk({ content: `word${i} ` });
      await sleep(100);
    }
    if (body.model === "late") chunk({ reasoning_details: [{ type: "reasoning.encrypted", data: "sig", format: "google-gemini-v1", index: 0 }] });
    chunk({}, "stop", { usage: { prompt_tokens: 10, completion_tokens: 30, total_tokens: 40 } });
    response.end("data: [DONE]\n\n");
  });
});
await new Promise((resolve) => upstream.listen(0, "127.0.0.1", resolve));
const dir = mkdtempSync(join(tmpdir(), "carrierd-live-"));
writeFileSync(
  join(dir, "routes.yaml"),
  `version: 1
providers:
  up: { plugin: openai-compatible, base_url: "http://127.0.0.1:${upstream.address().port}/v1" }
models:
  - { name: whole, provider: up, model: whole }
  - { name: late, provider: up, model: late }
carriers:
  - match: { model: late }
    fields: [reasoning_content, reasoning_details]
  - match: {}
    fields: [reasoning_content]
`,
);
const gateway = await startPinned(0, [join(checkout, "bin/carrierd"), "gateway", "--port", "0", "--routes", join(dir, "routes.yaml"), "--log-level", "warn"], {
  CARRIERD_HOME: join(dir, "home"),
  CARRIERD_API_KEY: KEY,
});

const doors = {
  chat: (model) => ["/v1/chat/completions", { model, stream: true, messages: [{ role: "user", content: "hi" }] }, '"content":"word'],
  responses: (model) => ["/v1/responses", { model, stream: true, store: false, input: "hi" }, "response.output_text.delta"],
  "responses+include": (model) => [
    "/v1/responses",
    { model, stream: true, store: false, include: ["reasoning.encrypted_content"], input: "hi" },
    "response.output_text.delta",
  ],
  messages: (model) => ["/v1/messages", { model, max_tokens: 1024, stream: true, messages: [{ role: "user", content: "hi" }] }, '"text_delta"'],
};

async function once(path, body, marker) {
  const response = await fetch(`http://127.0.0.1:${gateway.port}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${KEY}` },
    body: JSON.stringify(body),
  });
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let seenAt;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    if (seenAt === undefined && text.includes(marker)) seenAt = performance.now();
  }
  return seenAt - firstContentAt;
}

for (const model of ["whole", "late"])
  for (const [door, make] of Object.entries(doors)) {
    const gaps = [];
    for (let i = 0; i < SAMPLES + 1; i++) {
      const gap = await once(...make(model));
      if (i > 0) gaps.push(gap); // the first warms up
    }
    gaps.sort((a, b) => a - b);
    console.log(`${door.padEnd(18)} route ${model.padEnd(6)} median ${gaps[Math.floor(gaps.length / 2)].toFixed(1)} ms  worst ${gaps.at(-1).toFixed(1)} ms`);
  }
await stop(gateway);
upstream.close();

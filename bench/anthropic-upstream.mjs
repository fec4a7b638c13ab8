// An Anthropic Messages upstream that answers instantly, for the carried-path
// benchmark (bench/carried.mjs). Non-streaming: one Message. Streaming:
// message_start, a thinking block of THINKING_CHUNKS deltas and its
// signature, a text block of TEXT_CHUNKS deltas, message_delta, message_stop —
// written at once, like a cache hit.
import { createHash } from "node:crypto";
import { createServer } from "node:http";

const thinkingChunks = Number(process.env.THINKING_CHUNKS ?? 40);
const textChunks = Number(process.env.TEXT_CHUNKS ?? 20);
const usage = { input_tokens: 1200, cache_creation_input_tokens: 0, cache_read_input_tokens: 20000, output_tokens: 120 };

const server = createServer((request, response) => {
  const parts = [];
  request.on("data", (part) => parts.push(part));
  request.on("end", () => {
    const body = JSON.parse(Buffer.concat(parts).toString("utf8"));
    const id = `msg_${createHash("sha1").update(String(Math.random())).digest("hex").slice(0, 24)}`;
    const thinking = Array.from({ length: thinkingChunks }, (_, i) => `think ${i} `);
    const text = Array.from({ length: textChunks }, (_, i) => `word ${i} `);
    const signature = createHash("sha256").update(thinking.join("")).digest("base64");
    const message = { id, type: "message", role: "assistant", model: body.model, stop_reason: "end_turn", stop_sequence: null };
    if (body.stream !== true) {
      const content = [
        { type: "thinking", thinking: thinking.join(""), signature },
        { type: "text", text: text.join("") },
      ];
      response.writeHead(200, { "content-type": "application/json", "request-id": `req_${id}` });
      response.end(JSON.stringify({ ...message, content, usage }));
      return;
    }
    const event = (name, data) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
    let out = event("message_start", { type: "message_start", message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } });
    out += event("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } });
    for (const piece of thinking)
      out += event("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: piece } });
    out += event("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature } });
    out += event("content_block_stop", { type: "content_block_stop", index: 0 });
    out += event("content_block_start", { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } });
    for (const piece of text) out += event("content_block_delta", { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: piece } });
    out += event("content_block_stop", { type: "content_block_stop", index: 1 });
    out += event("message_delta", { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 120 } });
    out += event("message_stop", { type: "message_stop" });
    response.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "request-id": `req_${id}` });
    response.end(out);
  });
});
server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => console.log(`listening ${server.address().port}`));

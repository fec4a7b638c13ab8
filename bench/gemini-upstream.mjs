// A Gemini API upstream that answers instantly, for the carried-path
// benchmark (bench/gemini-carried.mjs). `:generateContent`: one whole
// response. `:streamGenerateContent?alt=sse`: THOUGHT_CHUNKS thought parts,
// TEXT_CHUNKS text parts (the last signed), then finishReason and
// usageMetadata — written at once, like a cache hit.
import { createHash } from "node:crypto";
import { createServer } from "node:http";

const thoughtChunks = Number(process.env.THOUGHT_CHUNKS ?? 40);
const textChunks = Number(process.env.TEXT_CHUNKS ?? 20);
const usageMetadata = { promptTokenCount: 21000, candidatesTokenCount: 60, thoughtsTokenCount: 60, totalTokenCount: 21120 };

const server = createServer((request, response) => {
  const parts = [];
  request.on("data", (part) => parts.push(part));
  request.on("end", () => {
    JSON.parse(Buffer.concat(parts).toString("utf8"));
    const model = /models\/([^:]+):/.exec(request.url)?.[1] ?? "gemini";
    const responseId = createHash("sha1").update(String(Math.random())).digest("hex").slice(0, 22);
    const thoughts = Array.from({ length: thoughtChunks }, (_, i) => `think ${i} `);
    const text = Array.from({ length: textChunks }, (_, i) => `word ${i} `);
    const thoughtSignature = createHash("sha256").update(thoughts.join("")).digest("base64");
    const chunk = (content, last) => ({
      candidates: [{ content: { role: "model", parts: content }, index: 0, ...(last ? { finishReason: "STOP" } : {}) }],
      usageMetadata,
      modelVersion: model,
      responseId,
    });
    if (!request.url.includes("alt=sse")) {
      const content = [
        { text: thoughts.join(""), thought: true },
        { text: text.join(""), thoughtSignature },
      ];
      response.writeHead(200, { "content-type": "application/json; charset=UTF-8" });
      response.end(JSON.stringify(chunk(content, true)));
      return;
    }
    let out = "";
    for (const piece of thoughts) out += `data: ${JSON.stringify(chunk([{ text: piece, thought: true }], false))}\r\n\r\n`;
    text.forEach((piece, i) => {
      const last = i === text.length - 1;
      out += `data: ${JSON.stringify(chunk([last ? { text: piece, thoughtSignature } : { text: piece }], last))}\r\n\r\n`;
    });
    response.writeHead(200, { "content-type": "text/event-stream" });
    response.end(out);
  });
});
server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => console.log(`listening ${server.address().port}`));

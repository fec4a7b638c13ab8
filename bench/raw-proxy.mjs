// The floor: a minimal pass-through proxy in plain Node. It receives the body,
// forwards it to the upstream over a keep-alive pool, and pipes the answer
// back. No parsing, no auth, no storage: what receiving and forwarding costs.
import { createServer } from "node:http";
import { Pool } from "undici";

const upstream = process.env.UPSTREAM;
// the upstream's endpoint every request goes to: chat completions, or the Responses API for a same-wire workload
const path = process.env.UPSTREAM_PATH ?? "/v1/chat/completions";
const pool = new Pool(upstream, { connections: 128, keepAliveTimeout: 60_000 });

const server = createServer((request, response) => {
  const parts = [];
  request.on("data", (part) => parts.push(part));
  request.on("end", async () => {
    try {
      const answer = await pool.request({
        path,
        method: "POST",
        headers: { "content-type": "application/json" },
        body: Buffer.concat(parts),
      });
      response.writeHead(answer.statusCode, { "content-type": answer.headers["content-type"] ?? "application/json" });
      for await (const piece of answer.body) response.write(piece);
      response.end();
    } catch (error) {
      response.writeHead(502).end(String(error));
    }
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => process.stdout.write(`listening ${server.address().port}\n`));

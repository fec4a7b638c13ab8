import { once } from "node:events";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { readSse } from "../support/gateway.js";
import { carrierd, cleanEnv, REPO, startGatewayProcess, type RunningGateway } from "../foundation/cli-process.js";

/**
 * The plugin docs/plugins.md shows, exactly as shipped in
 * docs/examples/thinking-field, installed the way a third party installs
 * one: in a folder of its own outside the repository, with carrierd as its
 * peer dependency in its node_modules, loaded by a real gateway process with
 * --plugins. Its upstream is strict: a message key it does not know is a 400.
 */
const EXAMPLE = join(REPO, "docs", "examples", "thinking-field");
const MESSAGE_KEYS = new Set(["role", "content", "name", "tool_calls", "tool_call_id", "thinking"]);
const THINKING = ["The user greets me. ", "I should greet back, ", "briefly."];

let dir: string;
let upstream: Server;
let gateway: RunningGateway;
const received: { messages: Record<string, unknown>[] }[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "carrierd-third-party-"));
  const plugin = join(dir, "plugins", "thinking-field");
  cpSync(EXAMPLE, plugin, { recursive: true });
  mkdirSync(join(plugin, "node_modules"));
  symlinkSync(REPO, join(plugin, "node_modules", "carrierd"), "dir"); // what `npm install carrierd` beside it gives

  upstream = createServer((request, response) => {
    let raw = "";
    request.on("data", (data: Buffer) => (raw += data));
    request.on("end", () => {
      const body = JSON.parse(raw) as { stream?: boolean; messages: Record<string, unknown>[] };
      received.push(body);
      const unknown = body.messages.flatMap((message) => Object.keys(message).filter((key) => !MESSAGE_KEYS.has(key)));
      if (unknown.length > 0) {
        response.writeHead(400, { "content-type": "application/json" });
        return response.end(JSON.stringify({ error: { message: `Unrecognized request argument supplied: ${unknown[0]}`, type: "invalid_request_error" } }));
      }
      if (!body.stream) {
        response.writeHead(200, { "content-type": "application/json" });
        return response.end(
          JSON.stringify({
            id: "x",
            object: "chat.completion",
            choices: [{ index: 0, message: { role: "assistant", thinking: THINKING.join(""), content: "Hello again." }, finish_reason: "stop" }],
          }),
        );
      }
      response.writeHead(200, { "content-type": "text/event-stream" });
      const chunk = (delta: object, finish: string | null = null) =>
        `data: ${JSON.stringify({ id: "x", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      response.end(THINKING.map((text) => chunk({ thinking: text })).join("") + chunk({ content: "Hello!" }) + chunk({}, "stop") + "data: [DONE]\n\n");
    });
  });
  upstream.listen(0, "127.0.0.1");
  await once(upstream, "listening");
  const routes = join(dir, "routes.yaml");
  writeFileSync(
    routes,
    `version: 1
providers:
  thinker: { plugin: thinking-field, base_url: "http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1" }
models:
  - { name: thinker, provider: thinker, model: thinker-1 }
`,
  );
  gateway = await startGatewayProcess(
    ["--port", "0", "--home", join(dir, "home"), "--routes", routes, "--plugins", join(dir, "plugins")],
    cleanEnv({ CARRIERD_API_KEY: "third-party-key-0123456789" }),
  );
});
afterAll(async () => {
  await gateway?.stop();
  upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

const chat = (body: object) =>
  fetch(`${gateway.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: "Bearer third-party-key-0123456789", "content-type": "application/json" },
    body: JSON.stringify({ model: "thinker", ...body }),
  });

test("docs/plugins.md shows the example plugin exactly as it is shipped", () => {
  const docs = readFileSync(join(REPO, "docs", "plugins.md"), "utf8");
  expect(docs).toContain(readFileSync(join(EXAMPLE, "index.js"), "utf8").trimEnd());
  expect(docs).toContain(readFileSync(join(EXAMPLE, "native.schema.json"), "utf8").trimEnd());
});

test("a plugin outside the repository, importing only carrierd/plugin, is listed, streams reasoning, and gets its own record back on the next turn", async () => {
  const listed = await carrierd(["plugins", "list", "--plugins", join(dir, "plugins")]);
  expect(listed.stdout).toMatch(/thinking-field/);

  const first = await readSse(await chat({ stream: true, messages: [{ role: "user", content: "Hi" }] }));
  expect(first.done).toBe(true);
  const deltas = first.events as { choices: { delta: { reasoning_content?: string; content?: string } }[] }[];
  expect(deltas.map((event) => event.choices[0]?.delta.reasoning_content ?? "").join("")).toBe(THINKING.join(""));
  expect(deltas.map((event) => event.choices[0]?.delta.content ?? "").join("")).toBe("Hello!");

  // a stateless client resends the visible history, without any reasoning
  const second = await chat({
    messages: [
      { role: "user", content: "Hi" },
      { role: "assistant", content: "Hello!" },
      { role: "user", content: "And again?" },
    ],
  });
  expect(second.status).toBe(200);
  const answer = (await second.json()) as { choices: { message: { content: string; reasoning_content?: string } }[] };
  expect(answer.choices[0]!.message).toMatchObject({ content: "Hello again.", reasoning_content: THINKING.join("") });
  const replayed = received.at(-1)!.messages[1]!;
  expect(replayed).toEqual({ role: "assistant", content: "Hello!", thinking: THINKING.join("") }); // verbatim, and nothing the upstream would reject
});

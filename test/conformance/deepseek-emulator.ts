import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { readFixture } from "../support/fixtures-dir.js";

/** One recorded exchange: the stream (one JSON chunk per line) and the same answer non-streamed. */
function fixture(name: string): { chunks: string[]; whole: string } {
  const chunks = readFixture(`chunks/${name}.chunks.txt`)
    .split("\n")
    .filter((line) => line.trim());
  return { chunks, whole: readFixture(`chunks/${name}.json`) };
}

/**
 * Other providers' recorded reasoning streams, served when the request names
 * their upstream model: Groq's `reasoning` deltas, Mistral's `thinking`
 * content chunks, Alibaba's `reasoning_content` with a `choices: []` usage chunk.
 */
const OTHER_RECORDINGS: Record<string, string> = {
  "qwen/qwen3-32b": "groq/groq-reasoning",
  "magistral-medium-2507": "mistral/mistral-reasoning",
  "qwen3-max": "alibaba/alibaba-reasoning",
};

export interface EmulatedUpstream {
  readonly baseUrl: string;
  /** Every request body received, parsed, in order. */
  readonly requests: Record<string, unknown>[];
  /** Every request as it arrived: its bytes and headers. */
  readonly received: { raw: string; headers: Record<string, string | string[] | undefined> }[];
  /** Every answer's body as it was sent. */
  readonly answers: string[];
  close(): Promise<void>;
}

/**
 * A loopback stand-in for api.deepseek.com's chat completions that replays
 * recorded real traffic: the tool-call recording when the request offers
 * tools (and the last message is not a tool result), the plain reasoning one
 * otherwise. A user message containing FAIL_MID_STREAM gets half the stream
 * and a dropped connection; FAIL_400 gets DeepSeek's own 400; FINISH_LENGTH
 * gets the answer with finish_reason "length". As OpenAI's API does, a
 * request with `logprobs: true` gets each content token's log probability
 * (`choices[].logprobs.content`), and one naming a `service_tier` gets the
 * tier that served it (`default` for `auto`) on the answer and every chunk.
 */
export async function startDeepSeekEmulator(): Promise<EmulatedUpstream> {
  const reasoning = fixture("deepseek/deepseek-reasoning");
  const toolCall = fixture("deepseek/deepseek-tool-call");
  const others = Object.fromEntries(Object.entries(OTHER_RECORDINGS).map(([model, name]) => [model, fixture(name)]));
  const requests: Record<string, unknown>[] = [];
  const received: EmulatedUpstream["received"][number][] = [];
  const answers: string[] = [];
  const server: Server = createServer((request, response) => {
    let text = "";
    request.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
    request.on("end", () => {
      const body = JSON.parse(text) as {
        model: string;
        stream?: boolean;
        tools?: unknown[];
        logprobs?: boolean;
        service_tier?: string;
        messages: { role: string; content?: unknown }[];
      };
      requests.push(body);
      received.push({ raw: text, headers: request.headers });
      const last = body.messages[body.messages.length - 1];
      const lastText = typeof last?.content === "string" ? last.content : JSON.stringify(last?.content ?? "");
      if (lastText.includes("FAIL_400")) {
        response.writeHead(400, { "content-type": "application/json" });
        response.end(
          JSON.stringify({
            error: {
              message: "The `reasoning_content` in the thinking mode must be passed back to the API.",
              type: "invalid_request_error",
              param: null,
              code: "invalid_request_error",
            },
          }),
        );
        return;
      }
      let recording = others[body.model] ?? (body.tools?.length && last?.role !== "tool" ? toolCall : reasoning);
      if (lastText.includes("FINISH_LENGTH")) {
        // the same answer, cut off by max_tokens
        const cut = (text: string) => text.replace(/"finish_reason":\s*"stop"/, '"finish_reason":"length"');
        recording = { chunks: recording.chunks.map(cut), whole: cut(recording.whole) };
      }
      if (body.logprobs === true || body.service_tier !== undefined) recording = withServing(recording, body.logprobs === true, body.service_tier);
      if (!body.stream) {
        answers.push(recording.whole);
        response.writeHead(200, { "content-type": "application/json" });
        response.end(recording.whole);
        return;
      }
      response.writeHead(200, { "content-type": "text/event-stream" });
      const chunks = lastText.includes("FAIL_MID_STREAM") ? recording.chunks.slice(0, 20) : recording.chunks;
      answers.push(chunks.map((chunk) => `data: ${chunk}\n\n`).join("") + (lastText.includes("FAIL_MID_STREAM") ? "" : "data: [DONE]\n\n"));
      for (const chunk of chunks) response.write(`data: ${chunk}\n\n`);
      if (lastText.includes("FAIL_MID_STREAM")) {
        // let the first half reach the gateway, then drop the connection as a crashing upstream would
        setTimeout(() => response.socket?.destroy(), 50);
        return;
      }
      response.end("data: [DONE]\n\n");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    received,
    answers,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A recording as served to a request that asked for log probabilities or named a service tier. */
function withServing(recording: { chunks: string[]; whole: string }, logprobs: boolean, tier: string | undefined): { chunks: string[]; whole: string } {
  const serve = (json: string, content: (choice: Record<string, unknown>) => unknown): string => {
    const object = JSON.parse(json) as Record<string, unknown> & { choices: Record<string, unknown>[] };
    for (const choice of object.choices) {
      const text = content(choice);
      if (logprobs && typeof text === "string" && text !== "")
        choice.logprobs = { content: [{ token: text, logprob: -0.0125, bytes: [...Buffer.from(text)], top_logprobs: [] }], refusal: null };
    }
    if (tier !== undefined) object.service_tier = tier === "auto" ? "default" : tier;
    return JSON.stringify(object);
  };
  const field = (key: string) => (choice: Record<string, unknown>) => (choice[key] as { content?: unknown } | undefined)?.content;
  return { chunks: recording.chunks.map((chunk) => serve(chunk, field("delta"))), whole: serve(recording.whole, field("message")) };
}

/** routes.yaml serving `demo` (in-process) and the emulator's recordings (`deepseek-reasoner` and three other dialects), with DeepSeek's real carrier route. */
export function conformanceRoutes(baseUrl: string): string {
  return `version: 1
providers:
  demo: { plugin: demo }
  deepseek: { plugin: openai-compatible, base_url: "${baseUrl}", api_key_env: DEEPSEEK_API_KEY }
models:
  - { name: demo, provider: demo, model: demo-reasoner }
  - { name: deepseek-reasoner, provider: deepseek, model: deepseek-reasoner }
  - { name: groq-qwen, provider: deepseek, model: qwen/qwen3-32b }
  - { name: magistral, provider: deepseek, model: magistral-medium-2507 }
  - { name: qwen3-max, provider: deepseek, model: qwen3-max }
carriers:
  - match: { provider: deepseek }
    fields: [reasoning_content]
    must_echo: true
  - match: {}
    fields: [reasoning_content]
`;
}

/** The weather tool the DeepSeek recording calls. */
export const WEATHER_TOOL = {
  type: "function",
  function: {
    name: "weather",
    description: "Get the weather in a location",
    parameters: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
  },
} as const;

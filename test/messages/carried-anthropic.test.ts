import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startAnthropicEmulator, type AnthropicEmulator } from "../plugins/emulators/anthropic-emulator.js";
import { readFixture } from "../support/fixtures-dir.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";

/**
 * The carried path on the Messages door (docs/api.md#carried-requests): a
 * Messages API client on an Anthropic route is carried, not rebuilt. The
 * upstream receives the client's bytes, changed only where carrierd must
 * (the model the route maps; reasoning blocks Anthropic did not sign), and
 * the client receives the upstream's answer as it was sent.
 */

const KEY = "sk-ant-emulated";
let anthropic: AnthropicEmulator;
let gateway: TestGateway;
let client: Anthropic;
/** What the emulator answers next instead of its usual answer (a rate limit the account hit). */
let refuseNext: { status: number; json: unknown; headers: Record<string, string> } | { status: number; sse: string } | undefined;

beforeAll(async () => {
  anthropic = await startAnthropicEmulator({
    apiKey: KEY,
    cacheUsage: true,
    before: () => {
      const reply = refuseNext;
      refuseNext = undefined;
      return reply;
    },
  });
  gateway = await startTestGateway({
    routes: `version: 1
providers:
  anthropic: { plugin: anthropic, base_url: "${anthropic.url}", api_key_env: ANTHROPIC_API_KEY }
models:
  - { name: claude-sonnet-4-5, provider: anthropic, model: claude-sonnet-4-5-20250929 }
  - { name: claude-opus-5-5, provider: anthropic, model: claude-opus-5-5-20261101 }
  - { name: deepseek-v4-pro, provider: anthropic, model: claude-opus-5-5-20261101 }
carriers:
  - match: {}
    fields: [reasoning_content]
`,
    env: { ANTHROPIC_API_KEY: KEY },
  });
  client = new Anthropic({ apiKey: gateway.key, baseURL: gateway.url, maxRetries: 0 });
});
afterAll(async () => {
  await gateway?.stop();
  await anthropic?.close();
});

interface Capture {
  headers: Record<string, string>;
  body: Record<string, unknown> & { model: string; messages: { role: string; content: unknown }[] };
}

function capture(name: string): Capture {
  return JSON.parse(readFixture(`clients/${name}`)) as Capture;
}

/** Posts bytes to the gateway's /v1/messages with the capture's anthropic-* headers, as Claude Code does. */
async function post(bytes: Buffer, headers: Record<string, string>): Promise<{ status: number; headers: Headers; text: string }> {
  const family = Object.fromEntries(Object.entries(headers).filter(([name]) => name.startsWith("anthropic-")));
  const response = await fetch(`${gateway.url}/v1/messages`, {
    method: "POST",
    headers: { ...family, "content-type": "application/json", authorization: `Bearer ${gateway.key}` },
    body: bytes,
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

const UPSTREAM: Record<string, string> = {
  "claude-sonnet-4-5": "claude-sonnet-4-5-20250929",
  "claude-opus-5-5": "claude-opus-5-5-20261101",
  "deepseek-v4-pro": "claude-opus-5-5-20261101",
};

describe("Claude Code's requests on an Anthropic route: the upstream gets the client's bytes", () => {
  const systemRole = [
    "claude-code-2.1.328-unrecognized-model-system-role-req.json",
    "claude-code-2.1.337-unrecognized-model-system-role-req.json",
    "claude-code-2.1.337-default-model-system-role-req.json",
  ];
  for (const name of systemRole) {
    for (const indent of [0, 2]) {
      test(`${name}${indent ? ", pretty-printed" : ""}: byte for byte but the model; the answer as Anthropic streamed it`, async () => {
        const { headers, body } = capture(name);
        const text = JSON.stringify(body, null, indent);
        const response = await post(Buffer.from(text), headers);
        expect(response.status, response.text).toBe(200);
        const received = anthropic.received.at(-1)!;
        // the one change: the model the route maps (the first "model" member is the top-level one)
        const modelMember = (model: string) => JSON.stringify({ model }, null, indent).slice(indent ? 4 : 1, -(indent ? 2 : 1));
        const expected = text.replace(modelMember(body.model), modelMember(UPSTREAM[body.model]!));
        expect(received.raw.toString("utf8")).toBe(expected);
        // the client's anthropic-* headers as sent (betas verbatim), carrierd's credential in place of the client's
        expect(received.headers["anthropic-beta"]).toBe(headers["anthropic-beta"]);
        expect(received.headers["anthropic-version"]).toBe(headers["anthropic-version"]);
        expect(received.headers["anthropic-dangerous-direct-browser-access"]).toBe("true");
        expect(received.headers["x-api-key"]).toBe(KEY);
        expect(received.headers.authorization).toBeUndefined();
        // the answer as the upstream sent it, every frame, and the session named beside it
        expect(response.text).toBe(anthropic.answers.at(-1));
        expect(response.headers.get("x-session-id")).toMatch(/^sess_/);
      });
    }
  }

  test("count_tokens with Claude Code's request: counted by Anthropic, sent byte for byte but the model", async () => {
    const { headers, body } = capture("claude-code-2.1.337-unrecognized-model-system-role-req.json");
    const { max_tokens: _max, stream: _stream, ...counted } = body;
    const text = JSON.stringify(counted);
    const family = Object.fromEntries(Object.entries(headers).filter(([name]) => name.startsWith("anthropic-")));
    const response = await fetch(`${gateway.url}/v1/messages/count_tokens`, {
      method: "POST",
      headers: { ...family, "content-type": "application/json", authorization: `Bearer ${gateway.key}` },
      body: text,
    });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(anthropic.answers.at(-1));
    const received = anthropic.received.at(-1)!;
    expect(received.path).toBe("/v1/messages/count_tokens");
    expect(received.raw.toString("utf8")).toBe(text.replace(`"model":"${body.model}"`, `"model":"${UPSTREAM[body.model]}"`));
    expect(received.headers["anthropic-beta"]).toBe(headers["anthropic-beta"]);
  });

  test("a continued session resent with carrierd's envelopes as signatures: those blocks are left out, the rest byte for byte", async () => {
    const { headers, body } = capture("claude-code-2.1.337-continue-toolresult-req.json");
    // up to the user's second prompt: the turns before it were answered on a route that is not Anthropic's
    const request = { ...body, messages: body.messages.slice(0, 5) };
    const sent = JSON.stringify(request);
    const response = await post(Buffer.from(sent), headers);
    expect(response.status, response.text).toBe(200);
    const withoutEnvelopes = {
      ...request,
      model: UPSTREAM[body.model],
      messages: request.messages.map((message) =>
        Array.isArray(message.content)
          ? { ...message, content: (message.content as { type: string; signature?: string }[]).filter((block) => !block.signature?.startsWith("cd1.")) }
          : message,
      ),
    };
    expect(anthropic.received.at(-1)!.raw.toString("utf8")).toBe(JSON.stringify(withoutEnvelopes));
  });

  test("a body of 128 KiB or more, sent upstream in pieces: the same bytes, its Content-Length theirs", async () => {
    const { headers, body } = capture("claude-code-2.1.337-continue-toolresult-req.json");
    // a long pasted document before the turns answered elsewhere: the envelopes' blocks are cut out around it
    const document = { role: "user", content: [{ type: "text", text: 'é lorem \\ "ipsum" '.repeat(9_000) }] };
    const assistant = { role: "assistant", content: [{ type: "text", text: "read" }] };
    const request = { ...body, messages: [document, assistant, ...body.messages.slice(0, 5)] };
    const sent = JSON.stringify(request);
    expect(Buffer.byteLength(sent)).toBeGreaterThan(128 * 1024);
    const response = await post(Buffer.from(sent), headers);
    expect(response.status, response.text).toBe(200);
    const withoutEnvelopes = {
      ...request,
      model: UPSTREAM[body.model],
      messages: request.messages.map((message) =>
        Array.isArray(message.content)
          ? { ...message, content: (message.content as { type: string; signature?: string }[]).filter((block) => !block.signature?.startsWith("cd1.")) }
          : message,
      ),
    };
    const received = anthropic.received.at(-1)!;
    expect(received.raw.toString("utf8")).toBe(JSON.stringify(withoutEnvelopes));
    expect(received.headers["content-length"]).toBe(String(received.raw.length));
  });

  test("the same continued session mid tool loop: Anthropic's own refusal reaches Claude Code unchanged, status and body", async () => {
    const { headers, body } = capture("claude-code-2.1.337-continue-toolresult-req.json");
    const response = await post(Buffer.from(JSON.stringify(body)), headers);
    expect(response.status).toBe(400);
    expect(response.text).toBe(anthropic.answers.at(-1));
    expect(response.text).toContain("Expected `thinking` or `redacted_thinking`, but found `tool_use`");
    expect(response.headers.get("content-type")).toBe("application/json");
  });
});

describe("what Anthropic answers reaches the client as Anthropic sent it", () => {
  const params = (stream: boolean): Anthropic.MessageCreateParams => ({
    model: "claude-sonnet-4-5",
    max_tokens: 1024,
    stop_sequences: ["llo"],
    messages: [{ role: "user", content: "Say hello." }],
    stream,
  });

  test("sent whole: stop_sequence, cache usage and service tier, byte for byte", async () => {
    const message = (await client.messages.create(params(false))) as Anthropic.Message;
    expect(message.stop_reason).toBe("stop_sequence");
    expect(message.stop_sequence).toBe("llo");
    expect(message.usage).toMatchObject({ input_tokens: 42, cache_creation_input_tokens: 1200, cache_read_input_tokens: 3400, service_tier: "standard" });
    expect(JSON.stringify(message)).toBe(anthropic.answers.at(-1));
  });

  test("streamed: message_start carries the real usage, the stop sequence comes through", async () => {
    const stream = client.messages.stream({ ...params(true), stream: undefined } as Anthropic.MessageCreateParamsNonStreaming);
    let startUsage: Anthropic.Usage | undefined;
    stream.on("streamEvent", (event) => {
      if (event.type === "message_start") startUsage = event.message.usage;
    });
    const message = await stream.finalMessage();
    expect(startUsage).toMatchObject({ input_tokens: 42, cache_creation_input_tokens: 1200 });
    expect(message.stop_reason).toBe("stop_sequence");
    expect(message.stop_sequence).toBe("llo");
  });

  test("a rate limit: status, body, retry-after, x-should-retry and anthropic-ratelimit-* as Anthropic sent them", async () => {
    const json = {
      type: "error",
      error: { type: "rate_limit_error", message: "Number of request tokens has exceeded your per-minute rate limit" },
      request_id: "req_011CRate",
    };
    refuseNext = {
      status: 429,
      json,
      headers: { "retry-after": "17", "x-should-retry": "true", "anthropic-ratelimit-tokens-remaining": "0", "request-id": "req_011CRate" },
    };
    const response = await post(Buffer.from(JSON.stringify(params(true))), { "anthropic-version": "2023-06-01" });
    expect(response.status).toBe(429);
    expect(response.text).toBe(JSON.stringify(json));
    expect(response.headers.get("retry-after")).toBe("17");
    expect(response.headers.get("x-should-retry")).toBe("true");
    expect(response.headers.get("anthropic-ratelimit-tokens-remaining")).toBe("0");
    expect(response.headers.get("request-id")).toBe("req_011CRate");
  });

  test("an error Anthropic reports mid-stream reaches the client as its own event, and nothing after it", async () => {
    const event = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
    const sse =
      event("message_start", {
        type: "message_start",
        message: {
          id: "msg_x",
          type: "message",
          role: "assistant",
          model: "m",
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 5, output_tokens: 1 },
        },
      }) +
      event("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }) +
      event("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hel" } }) +
      event("error", { type: "error", error: { type: "overloaded_error", message: "Overloaded" } });
    refuseNext = { status: 200, sse };
    const response = await post(Buffer.from(JSON.stringify(params(true))), { "anthropic-version": "2023-06-01" });
    expect(response.status).toBe(200);
    expect(response.text).toBe(sse);
  });

  test("a field carrierd has never heard of reaches Anthropic, and Anthropic's refusal of it reaches the client", async () => {
    const response = await post(Buffer.from(JSON.stringify({ ...params(false), speculative_decoding: { enabled: true } })), {
      "anthropic-version": "2023-06-01",
    });
    expect(response.status).toBe(400);
    expect(JSON.parse(anthropic.received.at(-1)!.raw.toString("utf8")).speculative_decoding).toEqual({ enabled: true });
    expect(response.text).toBe(anthropic.answers.at(-1));
    expect(response.text).toContain("speculative_decoding: Extra inputs are not permitted");
  });
});

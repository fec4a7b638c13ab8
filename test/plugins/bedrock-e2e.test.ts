import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { ask } from "../support/stateless-client.js";
import { signReasoning, startBedrockEmulator, validation } from "./emulators/bedrock-emulator.js";
import { startCassetteEmulator, type Emulator } from "./emulators/http-emulator.js";
import { verifySigV4 } from "./emulators/sigv4-verifier.js";
import { cassette, json } from "./support/fixtures.js";
import { saveEnv } from "../support/saved-env.js";

const CREDENTIALS = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", sessionToken: "session-token-1" };
const CLAUDE = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";
const restoreEnv = saveEnv();
beforeAll(() => {
  // the plugin reads AWS credentials from the daemon's environment, as the AWS SDKs do
  Object.assign(process.env, {
    AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
    AWS_SESSION_TOKEN: CREDENTIALS.sessionToken,
    AWS_REGION: "us-east-1",
  });
});
afterAll(restoreEnv);

const weather = {
  type: "function",
  function: {
    name: "weather",
    description: "Get weather information for a location",
    parameters: { properties: { location: { description: "the city", type: "string" } }, required: ["location"], type: "object" },
  },
};

describe.each([
  ["TestBedrockCommon/bedrock-anthropic-claude-sonnet-4-5/tool", false],
  ["TestBedrockCommon/bedrock-anthropic-claude-sonnet-4-5/tool_streaming", true],
])("recorded InvokeModel traffic through the daemon: %s", (path, stream) => {
  const interactions = cassette(path);
  let upstream: Emulator;
  let gateway: TestGateway;
  beforeAll(async () => {
    upstream = await startCassetteEmulator(interactions, (request) => {
      const problem = verifySigV4(request, CREDENTIALS, "bedrock");
      return problem ? validation(problem, 403, "InvalidSignatureException") : undefined;
    });
    gateway = await startTestGateway({
      routes: `version: 1
providers:
  bedrock: { plugin: bedrock, base_url: ${upstream.url} }
models:
  - { name: claude, provider: bedrock, model: "${CLAUDE}", params: { bedrock_api: invoke } }
carriers:
  - match: {}
    fields: [reasoning_content]
`,
    });
  });
  afterAll(async () => {
    await gateway.stop();
    await upstream.close();
  });

  test("a stateless client's turn 2 reaches Bedrock exactly as recorded, signed with SigV4", async () => {
    const request = { model: "claude", stream, tools: [weather], tool_choice: "auto", max_tokens: 4000 };
    const messages = [
      { role: "system", content: "You are a helpful assistant" },
      { role: "user", content: "What's the weather in Florence,Italy?" },
    ];
    const first = await ask(gateway, { ...request, messages });
    expect(first.status).toBe(200);
    const id = (first.kept.tool_calls as { id: string }[])[0]!.id;
    const second = await ask(gateway, { ...request, messages: [...messages, first.kept, { role: "tool", tool_call_id: id, content: "40 C" }] });
    expect(second.status).toBe(200);
    expect(second.kept.content).toContain("Florence");
    expect(upstream.received.map((received) => received.status)).toEqual([200, 200]);
    expect(upstream.received[0]!.body).toEqual(json(interactions[0]!.request.body));
    expect(upstream.received[1]!.body).toEqual(json(interactions[1]!.request.body));
  });
});

describe("Converse emulator through the daemon", () => {
  let bedrock: Emulator;
  let gateway: TestGateway;
  beforeAll(async () => {
    bedrock = await startBedrockEmulator({ credentials: CREDENTIALS, redacted: true });
    gateway = await startTestGateway({
      routes: `version: 1
providers:
  bedrock: { plugin: bedrock, base_url: ${bedrock.url} }
models:
  - { name: claude, provider: bedrock, model: "${CLAUDE}", params: { additionalModelRequestFields: { thinking: { type: enabled, budget_tokens: 2000 } } } }
  - { name: gpt-oss, provider: bedrock, model: "openai.gpt-oss-120b-1:0" }
  - { name: r1, provider: bedrock, model: "us.deepseek.r1-v1:0" }
  - { name: gpt-oss-stripped, provider: bedrock, model: "openai.gpt-oss-20b-1:0" }
carriers:
  - match: { provider: bedrock, model: "openai.gpt-oss-20b*" }
    fields: []
    replay: stripped
  - match: {}
    fields: [reasoning_content]
`,
    });
  });
  afterAll(async () => {
    await gateway.stop();
    await bedrock.close();
  });

  /** A tool loop, its answer, and a follow-up question: the follow-up's request holds one prior tool turn. */
  async function conversation(model: string, stream: boolean) {
    const user = { role: "user", content: "Weather in Florence?" };
    const first = await ask(gateway, { model, stream, tools: [weather], messages: [user] });
    expect(first.status).toBe(200);
    const id = (first.kept.tool_calls as { id: string }[])[0]!.id;
    const loop = [user, first.kept, { role: "tool", tool_call_id: id, content: "31 C" }];
    const second = await ask(gateway, { model, stream, tools: [weather], messages: loop });
    expect(second.status).toBe(200);
    const third = await ask(gateway, { model, stream, tools: [weather], messages: [...loop, second.kept, { role: "user", content: "And tomorrow?" }] });
    expect(third.status).toBe(200);
    return { first, second, loopRequest: bedrock.received.at(-2)!.body!, followUp: bedrock.received.at(-1)!.body! };
  }

  const reasoningOf = (body: Record<string, unknown>, index: number) =>
    (body.messages as { content: Record<string, unknown>[] }[])
      [index]!.content.filter((block) => block.reasoningContent)
      .map((block) => block.reasoningContent);

  test.each([false, true])("stream=%s Claude: signed and redacted reasoning survive stateless turns (signed policy)", async (stream) => {
    const { first, loopRequest, followUp } = await conversation("claude", stream);
    expect(first.reasoning).toBe("I should call weather.");
    const replayed = reasoningOf(loopRequest, 1);
    expect(replayed).toEqual([
      { redactedContent: expect.any(String) },
      { reasoningText: { text: "I should call weather.", signature: signReasoning("I should call weather.") } },
    ]);
    expect(reasoningOf(followUp, 1)).toEqual(replayed);
    expect(JSON.stringify(followUp)).not.toContain("native_record");
  });

  test("other models (unsigned): earlier turns carry readable reasoning text only", async () => {
    const { followUp } = await conversation("gpt-oss", false);
    expect(reasoningOf(followUp, 1)).toEqual([{ reasoningText: { text: "I should call weather." } }]);
  });

  test("DeepSeek-R1 (stripped): earlier turns carry no reasoning, the tool loop in flight keeps it", async () => {
    const { loopRequest, followUp } = await conversation("r1", false);
    expect(reasoningOf(loopRequest, 1)).toEqual([{ reasoningText: { text: "I should call weather." } }]);
    expect(reasoningOf(followUp, 1)).toEqual([]);
  });

  test("routes.yaml replay: stripped overrides the model's default", async () => {
    const { followUp } = await conversation("gpt-oss-stripped", false);
    expect(reasoningOf(followUp, 1)).toEqual([]);
  });

  test("Claude history from elsewhere gets Bedrock's ValidationException, passed through", async () => {
    const foreign = {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "tooluse_x", type: "function", function: { name: "weather", arguments: '{"location":"Oslo"}' } }],
    };
    const reply = await ask(gateway, {
      model: "claude",
      tools: [weather],
      messages: [{ role: "user", content: "Oslo?" }, foreign, { role: "tool", tool_call_id: "tooluse_x", content: "1 C" }],
    });
    expect(reply.status).toBe(400);
    expect(reply.error?.message).toContain(
      "The model returned the following errors: messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`.",
    );
  });

  test("the emulator recomputes SigV4: a request signed with the wrong secret is refused", async () => {
    process.env.AWS_SECRET_ACCESS_KEY = "not-the-secret";
    try {
      const reply = await ask(gateway, { model: "gpt-oss", messages: [{ role: "user", content: "hi" }] });
      expect(reply.status).toBe(403);
      expect(reply.error?.message).toContain("The request signature we calculated does not match the signature you provided.");
    } finally {
      process.env.AWS_SECRET_ACCESS_KEY = CREDENTIALS.secretAccessKey;
    }
  });
});

describe("a Bedrock model that refuses redacted reasoning", () => {
  let bedrock: Emulator;
  let gateway: TestGateway;
  beforeAll(async () => {
    bedrock = await startBedrockEmulator({ credentials: CREDENTIALS, redacted: true, refuseRedacted: true });
    gateway = await startTestGateway({
      routes: `version: 1
providers:
  bedrock: { plugin: bedrock, base_url: ${bedrock.url} }
models:
  - { name: claude, provider: bedrock, model: "${CLAUDE}", params: { additionalModelRequestFields: { thinking: { type: enabled, budget_tokens: 2000 } } } }
carriers:
  - match: {}
    fields: [reasoning_content]
`,
    });
  });
  afterAll(async () => {
    await gateway.stop();
    await bedrock.close();
  });

  test("gets the request once more without the redacted block, signed thinking kept", async () => {
    const user = { role: "user", content: "Weather in Florence?" };
    const first = await ask(gateway, { model: "claude", tools: [weather], messages: [user] });
    const id = (first.kept.tool_calls as { id: string }[])[0]!.id;
    const before = bedrock.received.length;
    const second = await ask(gateway, { model: "claude", tools: [weather], messages: [user, first.kept, { role: "tool", tool_call_id: id, content: "31 C" }] });
    expect(second.status).toBe(200);
    expect(bedrock.received.slice(before).map((request) => request.status)).toEqual([400, 200]);
    const retried = (bedrock.received.at(-1)!.body as { messages: { content: Record<string, unknown>[] }[] }).messages[1]!.content;
    expect(retried.map((block) => Object.keys(block)[0])).toEqual(["reasoningContent", "toolUse"]);
    expect(JSON.stringify(retried)).not.toContain("redactedContent");
  });
});

import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { mergeLayout } from "../../plugins/anthropic/content-layout.js";
import { ConverseDecoder } from "../../plugins/bedrock/converse-decoder.js";
import { buildConverseBody } from "../../plugins/bedrock/converse-request.js";
import { classifyBedrockError } from "../../plugins/bedrock/errors.js";
import { readEventStream } from "../../plugins/bedrock/event-stream.js";
import { invokeBedrock } from "../../plugins/bedrock/invoke.js";
import { defaultReplayPolicy } from "../../plugins/bedrock/replay-policy.js";
import { partsOf, type ChatMessage, type JsonObject, type PluginContext } from "../../src/providers/contract.js";
import { UpstreamHttp } from "../../src/providers/upstream/upstream-http.js";
import { startCassetteEmulator, type Emulator } from "./emulators/http-emulator.js";
import { validation } from "./emulators/bedrock-emulator.js";
import { verifySigV4 } from "./emulators/sigv4-verifier.js";
import { fold, replayedAssistant, upstreamCall } from "./support/calls.js";
import { cassette, chunkJson, chunkLines, json } from "./support/fixtures.js";
import { saveEnv } from "../support/saved-env.js";

const CREDENTIALS = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", sessionToken: "session-token-1" };
const restoreEnv = saveEnv();
beforeAll(() => {
  Object.assign(process.env, {
    AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
    AWS_SESSION_TOKEN: CREDENTIALS.sessionToken,
    AWS_REGION: "us-east-1",
  });
});
afterAll(restoreEnv);

// the core's transport: Bedrock reads its binary event stream itself, through the core's pool and deadlines
const http = new UpstreamHttp();
afterAll(() => http.close());
const context: PluginContext = { http, log: { debug() {}, info() {}, warn() {} } };

function chunkEvents(path: string): StreamPart[] {
  const decoder = new ConverseDecoder();
  return chunkLines(path).flatMap((line) => {
    const [type, payload] = Object.entries(JSON.parse(line) as JsonObject)[0]!;
    return decoder.event(type, payload as JsonObject);
  });
}
type StreamPart = ReturnType<ConverseDecoder["event"]>[number];

describe("Converse decoding (vercel/ai fixtures)", () => {
  test("streamed reasoning text and signature fold into an Anthropic-format thinking block", () => {
    const turn = fold(chunkEvents("amazon-bedrock/amazon-bedrock-reasoning.chunks.txt"), mergeLayout);
    expect(turn.reasoningText).toBe(
      "Let me count the r's in \"strawberry\":\n\ns-t-r-a-w-b-e-r-r-y\n\nr appears at positions 3, 8, and 9.\n\nSo there are 3 r's.",
    );
    expect(turn.content).toBe('There are **3** r\'s in "strawberry":\n\n1. st**r**awbe**r****r**y');
    const [thinking, text] = (turn.nativeRecord as { content: Record<string, string>[] }).content;
    expect(thinking).toEqual({ type: "thinking", thinking: turn.reasoningText, signature: expect.stringMatching(/^Ep0CCkgICxABGAIq.*aGAE=$/) });
    expect(text).toEqual({ type: "text", text: turn.content });
    expect(turn.usage).toMatchObject({ prompt_tokens: 51, completion_tokens: 94 });
  });

  test("a non-streamed answer stores the same shape", () => {
    const body = chunkJson("amazon-bedrock/amazon-bedrock-reasoning.json") as JsonObject;
    const turn = fold(new ConverseDecoder().response(body), mergeLayout);
    const reasoning = (((body.output as JsonObject).message as JsonObject).content as JsonObject[])[0]!.reasoningContent as JsonObject;
    const recorded = reasoning.reasoningText as JsonObject;
    expect((turn.nativeRecord as { content: unknown[] }).content[0]).toEqual({ type: "thinking", thinking: recorded.text, signature: recorded.signature });
    expect(turn.finishReason).toBe("stop");
  });

  test("tool calls: streamed input fragments and whole input both become OpenAI arguments", () => {
    const streamed = fold(chunkEvents("amazon-bedrock/amazon-bedrock-tool-call.1.chunks.txt"), mergeLayout);
    expect(streamed.toolCalls).toEqual([{ id: "tool-use-id", type: "function", function: { name: "test-tool", arguments: '{"value":"Sparkle Day"}' } }]);
    expect(streamed.finishReason).toBe("tool_calls");
    const whole = fold(new ConverseDecoder().response(chunkJson("amazon-bedrock/amazon-bedrock-tool-call.1.json") as JsonObject), mergeLayout);
    expect(whole.toolCalls[0]!.function).toEqual({ name: "bash", arguments: '{"command":"ls -l"}' });
    expect(whole.nativeRecord).toEqual({ content: [{ type: "tool_use", id: "tool-use-id" }] });
  });
});

describe("Converse requests and the replay policy", () => {
  const record: JsonObject = {
    content: [
      { type: "redacted_thinking", data: "UkVEQUNURUQ=" },
      { type: "thinking", thinking: "Call the tool.", signature: "SIG" },
      { type: "tool_use", id: "t1" },
    ],
  };
  const toolTurn: ChatMessage = {
    role: "assistant",
    content: null,
    tool_calls: [{ id: "t1", type: "function", function: { name: "weather", arguments: '{"location":"Rome"}' } }],
    native_record: record,
  };
  const history: ChatMessage[] = [
    { role: "system", content: "Be brief." },
    { role: "user", content: "Rome?" },
    toolTurn,
    { role: "tool", tool_call_id: "t1", content: "20 C" },
    {
      role: "assistant",
      content: "It is 20 C.",
      native_record: {
        content: [
          { type: "thinking", thinking: "Answer.", signature: "SIG2" },
          { type: "text", text: "It is 20 C." },
        ],
      },
    },
    { role: "user", content: "And tomorrow?" },
  ];
  const tools = [{ type: "function", function: { name: "weather", parameters: { type: "object", properties: { location: { type: "string" } } } } }];
  const build = (model: string, replay?: "signed" | "unsigned" | "stripped") =>
    buildConverseBody(
      upstreamCall({
        plugin: "bedrock",
        baseUrl: "https://bedrock-runtime.us-east-1.amazonaws.com",
        model,
        body: { messages: history, tools, max_tokens: 1000 },
        policy: { replay },
      }),
    );

  test("per-model defaults", () => {
    expect(defaultReplayPolicy("us.anthropic.claude-sonnet-4-5-20250929-v1:0")).toBe("signed");
    expect(defaultReplayPolicy("us.deepseek.r1-v1:0")).toBe("stripped");
    expect(defaultReplayPolicy("openai.gpt-oss-120b-1:0")).toBe("unsigned");
  });

  test("signed (Claude): redacted and signed blocks verbatim, before the toolUse they preceded", () => {
    const body = build("us.anthropic.claude-sonnet-4-5-20250929-v1:0");
    expect(body.system).toEqual([{ text: "Be brief." }]);
    expect((body.messages as JsonObject[])[1]).toEqual({
      role: "assistant",
      content: [
        { reasoningContent: { redactedContent: "UkVEQUNURUQ=" } },
        { reasoningContent: { reasoningText: { text: "Call the tool.", signature: "SIG" } } },
        { toolUse: { toolUseId: "t1", name: "weather", input: { location: "Rome" } } },
      ],
    });
    expect((body.messages as JsonObject[])[2]).toEqual({ role: "user", content: [{ toolResult: { toolUseId: "t1", content: [{ text: "20 C" }] } }] });
    expect(body.toolConfig).toEqual({ tools: [{ toolSpec: { name: "weather", inputSchema: { json: tools[0]!.function.parameters } } }] });
    expect(JSON.stringify(body)).not.toContain("native_record");
  });

  test("unsigned (others): readable text only; stripped: nothing; routes.yaml replay overrides", () => {
    const unsigned = (build("openai.gpt-oss-120b-1:0").messages as JsonObject[])[1]!;
    expect(unsigned.content).toEqual([
      { reasoningContent: { reasoningText: { text: "Call the tool." } } },
      { toolUse: { toolUseId: "t1", name: "weather", input: { location: "Rome" } } },
    ]);
    const stripped = (build("us.deepseek.r1-v1:0").messages as JsonObject[])[1]!;
    expect(stripped.content).toEqual([{ toolUse: { toolUseId: "t1", name: "weather", input: { location: "Rome" } } }]);
    const overridden = (build("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "stripped").messages as JsonObject[])[3]!;
    expect(overridden.content).toEqual([{ text: "It is 20 C." }]);
  });

  test("reasoning_effort → Claude thinking budget in additionalModelRequestFields, maxTokens above it", () => {
    const body = buildConverseBody(
      upstreamCall({
        plugin: "bedrock",
        baseUrl: "https://bedrock-runtime.us-east-1.amazonaws.com",
        model: "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        effort: "low",
        body: { messages: [{ role: "user", content: "hi" }], max_tokens: 1000, temperature: 0.3 },
      }),
    );
    expect(body.additionalModelRequestFields).toEqual({ thinking: { type: "enabled", budget_tokens: 2048 } });
    expect(body.inferenceConfig).toEqual({ maxTokens: 3048 });
  });
});

describe("InvokeModel (Anthropic body) — TestBedrockCommon cassettes, SigV4 verified", () => {
  describe.each([
    ["TestBedrockCommon/bedrock-anthropic-claude-sonnet-4-5/tool", false],
    ["TestBedrockCommon/bedrock-anthropic-claude-sonnet-4-5/tool_streaming", true],
  ])("%s", (path, stream) => {
    const interactions = cassette(path);
    let upstream: Emulator;
    beforeAll(async () => {
      upstream = await startCassetteEmulator(interactions, (request) => {
        const problem = verifySigV4(request, CREDENTIALS, "bedrock");
        return problem ? validation(problem, 403, "InvalidSignatureException") : undefined;
      });
    });
    afterAll(() => upstream.close());

    test("turn 1 and a stateless turn 2 equal the recorded requests", async () => {
      const model = decodeURIComponent(/\/model\/([^/]+)\//.exec(interactions[0]!.request.url)![1]!);
      const system: ChatMessage = { role: "system", content: "You are a helpful assistant" };
      const user: ChatMessage = { role: "user", content: "What's the weather in Florence,Italy?" };
      const tools = [
        {
          type: "function",
          function: {
            name: "weather",
            description: "Get weather information for a location",
            parameters: { properties: { location: { description: "the city", type: "string" } }, required: ["location"], type: "object" },
          },
        },
      ];
      const call = (messages: ChatMessage[]) =>
        upstreamCall({
          plugin: "bedrock",
          baseUrl: upstream.url,
          model,
          stream,
          apiKey: "",
          body: { messages, tools, tool_choice: "auto", max_tokens: 4000, bedrock_api: "invoke" },
        });
      const first = await invokeBedrock({ ...call([system, user]), apiKey: undefined }, context);
      expect(first.ok).toBe(true);
      if (!first.ok) return;
      const parts: StreamPart[] = [];
      for await (const item of first.parts) parts.push(...partsOf(item));
      const turn = fold(parts, mergeLayout);
      expect(upstream.received[0]!.path).toBe(new URL(interactions[0]!.request.url).pathname);
      expect(upstream.received[0]!.body).toEqual(json(interactions[0]!.request.body));
      expect(turn.toolCalls[0]!.function.name).toBe("weather");
      expect(JSON.parse(turn.toolCalls[0]!.function.arguments)).toEqual({ location: "Florence,Italy" });
      const second = await invokeBedrock(
        { ...call([system, user, replayedAssistant(turn), { role: "tool", tool_call_id: turn.toolCalls[0]!.id, content: "40 C" }]), apiKey: undefined },
        context,
      );
      expect(second.ok).toBe(true);
      expect(upstream.received[1]!.status).toBe(200);
      expect(upstream.received[1]!.body).toEqual(json(interactions[1]!.request.body));
    });
  });
});

test("the event-stream reader survives frames cut anywhere and rejects a truncated one", async () => {
  const bytes = Buffer.from(cassette("TestBedrockCommon/bedrock-anthropic-claude-sonnet-4-5/tool_streaming")[0]!.responseBytes!);
  async function* pieces(size: number) {
    for (let offset = 0; offset < bytes.length; offset += size) yield bytes.subarray(offset, offset + size);
  }
  const types: string[] = [];
  for await (const message of readEventStream(pieces(7))) types.push(message.type);
  expect(types.length).toBe(11);
  expect(new Set(types)).toEqual(new Set(["chunk"]));
  async function* truncated() {
    yield bytes.subarray(0, bytes.length - 3);
  }
  await expect(async () => {
    for await (const _ of readEventStream(truncated())) void _;
  }).rejects.toThrow(/ended inside a frame/);
});

test("the classifier names the field Bedrock calls extraneous or not permitted", () => {
  expect(classifyBedrockError(400, '{"message":"The model returned the following errors: reasoning_effort: Extra inputs are not permitted"}')).toBe(
    "reasoning_effort",
  );
  expect(
    classifyBedrockError(
      400,
      '{"message":"Malformed input request: #: extraneous key [reasoning_content] is not permitted, please reformat your input and try again."}',
    ),
  ).toBe("reasoning_content");
  expect(
    classifyBedrockError(400, '{"message":"The model returned the following errors: messages.1.content.0: Invalid `signature` in `thinking` block"}'),
  ).toBeUndefined();
});

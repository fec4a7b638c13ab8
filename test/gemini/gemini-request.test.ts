import { describe, expect, test } from "vitest";
import { countedRequest, validateGenerateRequest } from "../../src/ingress/gemini/request.js";
import { jsonSchemaOf, toChatRequest } from "../../src/ingress/gemini/to-chat-request.js";
import { readFixture } from "../support/fixtures-dir.js";

/** Gemini CLI 0.61.0's real requests (test/fixtures/clients/) as the gateway's turn request. */
const recorded = (name: string) => validateGenerateRequest((JSON.parse(readFixture(`clients/${name}`)) as { body: unknown }).body);

describe("Gemini CLI's model router (non-streamed, JSON schema, thinking level)", () => {
  const body = recorded("gemini-cli-0.61.0-router-req.json");

  test("on another route: its system instruction, both user contents, the schema as JSON Schema, the level as the effort", () => {
    const chat = toChatRequest("gemini-3.5-flash-lite", body, { gemini: false }, false);
    expect(chat.messages.map((message) => message.role)).toEqual(["system", "user", "user"]);
    expect(chat.messages[0]!.content).toContain("Task Routing AI");
    expect(chat.response_format).toEqual({
      type: "json_schema",
      json_schema: {
        name: "response",
        schema: {
          type: "object",
          properties: {
            complexity_reasoning: { type: "string", description: "Brief explanation for the score." },
            complexity_score: { type: "integer", description: "Complexity score from 1-100." },
          },
          required: ["complexity_reasoning", "complexity_score"],
        },
      },
    });
    expect(chat.model_options).toEqual({ reasoning: { enabled: true, effort: "high" } });
    expect(chat).toMatchObject({ temperature: 1, top_p: 0.95 });
    expect(chat.stream).toBeUndefined();
    expect(chat.generationConfig).toBeUndefined();
  });

  test("on a Gemini route: generationConfig goes on as sent", () => {
    const chat = toChatRequest("gemini-3.5-flash-lite", body, { gemini: true }, false);
    expect(chat.generationConfig).toEqual(body.generationConfig);
    expect(chat.response_format).toBeUndefined();
  });
});

describe("Gemini CLI's request after a tool call", () => {
  const body = recorded("gemini-cli-0.61.0-toolresult-req.json");

  test("the function call and its response pair by the client's id, the response's output as the tool's text, the tools as JSON Schema functions", () => {
    const chat = toChatRequest("gemini-3.8-flash", body, { gemini: false }, true);
    expect(chat.stream).toBe(true);
    const [system, user, assistant, tool] = chat.messages;
    expect(system!.role).toBe("system");
    expect(user!.content).toContain("notes-gem.txt");
    expect(assistant).toEqual({
      role: "assistant",
      content: null,
      tool_calls: [
        {
          id: "read_file_1796661730709_0",
          type: "function",
          function: { name: "read_file", arguments: JSON.stringify({ file_path: "/home/user/project/notes-gem.txt" }) },
        },
      ],
    });
    expect(tool).toEqual({ role: "tool", tool_call_id: "read_file_1796661730709_0", content: "The orchard gate combination is 7-3-9 (PLUM-WREN).\n" });
    const readFile = chat.tools!.find((entry) => (entry.function as { name: string }).name === "read_file")!;
    const declared = body.tools![0]!.functionDeclarations!.find((declaration) => declaration.name === "read_file")!;
    expect((readFile.function as { parameters: unknown }).parameters).toBe(declared.parametersJsonSchema);
  });
});

test("calls without ids pair with their responses by name, in order", () => {
  const chat = toChatRequest(
    "m",
    validateGenerateRequest({
      contents: [
        { role: "user", parts: [{ text: "go" }] },
        { role: "model", parts: [{ text: "thinking", thought: true }, { functionCall: { name: "a", args: {} } }, { functionCall: { name: "b", args: {} } }] },
        { role: "user", parts: [{ functionResponse: { name: "b", response: { result: "B" } } }, { functionResponse: { name: "a", response: { x: 1 } } }] },
      ],
    }),
    { gemini: false },
    false,
  );
  const calls = chat.messages[1]!.tool_calls!;
  expect(calls.map((call) => call.id)).toEqual(["call_1_1", "call_1_2"]);
  expect(chat.messages.slice(2)).toEqual([
    { role: "tool", tool_call_id: "call_1_2", content: "B" },
    { role: "tool", tool_call_id: "call_1_1", content: '{"x":1}' },
  ]);
});

test("Gemini's Schema as JSON Schema: lower-case types, nullable as a null type, nested", () => {
  expect(jsonSchemaOf({ type: "OBJECT", properties: { a: { type: "STRING", nullable: true }, b: { type: "ARRAY", items: { type: "NUMBER" } } } })).toEqual({
    type: "object",
    properties: { a: { type: ["string", "null"] }, b: { type: "array", items: { type: "number" } } },
  });
});

test("refused on another route: Google's own tools, cachedContent, several candidates; a nested countTokens request is read", () => {
  const base = { contents: [{ role: "user", parts: [{ text: "hi" }] }] };
  expect(() => toChatRequest("m", validateGenerateRequest({ ...base, tools: [{ googleSearch: {} }] }), { gemini: false }, false)).toThrow(/googleSearch/);
  expect(() => toChatRequest("m", validateGenerateRequest({ ...base, cachedContent: "cachedContents/x" }), { gemini: false }, false)).toThrow(/cachedContent/);
  expect(() => toChatRequest("m", validateGenerateRequest({ ...base, generationConfig: { candidateCount: 2 } }), { gemini: false }, false)).toThrow(
    /one candidate/,
  );
  expect(countedRequest({ generateContentRequest: { model: "models/m", ...base } }).contents).toHaveLength(1);
  expect(() => validateGenerateRequest({ contents: [{ role: "user", parts: [{ text: 1 }] }] })).toThrow(/contents\[0\]\.parts\[0\]\.text/);
});

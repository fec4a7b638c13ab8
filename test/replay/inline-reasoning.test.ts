import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { splitInlineContent } from "../../src/routing/carriers/inline-reasoning.js";
import { familyRoutes, WEATHER_TOOL } from "../support/family-routes.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { startOpenAIUpstream, type OpenAIUpstream } from "../support/openai-upstream.js";
import { ask, assistantsOf, carriersOf, type Message } from "../support/stateless-client.js";

// Reasoning a frontend inlined in an assistant message's content: the route's rules decide what the upstream receives.

let upstream: OpenAIUpstream;
let gateway: TestGateway;
beforeAll(async () => {
  upstream = await startOpenAIUpstream();
  gateway = await startTestGateway({ routes: familyRoutes(upstream) });
});
afterAll(async () => {
  await gateway.stop();
  await upstream.close();
});

const foreignCall = (id: string) => [{ id, type: "function", function: { name: "weather", arguments: '{"city":"Oslo"}' } }];

/** Sends `history` + a follow-up to `model` and returns the assistant messages the upstream received. */
async function sent(model: string, history: Message[]): Promise<Record<string, unknown>[]> {
  const flavor = model.split("/")[0]!;
  const before = upstream.requestsFor(flavor).length;
  const reply = await ask(gateway, { model, tools: [WEATHER_TOOL], messages: [...history, { role: "user", content: "And tomorrow?" }] });
  expect(reply.status, JSON.stringify(reply.error)).toBe(200);
  return assistantsOf(upstream.requestsFor(flavor)[before]!.body);
}

describe("a route whose own field carries reasoning", () => {
  test("must_echo: nothing stored, an inline <think> block is the turn's reasoning, not its text", async () => {
    const history: Message[] = [
      { role: "user", content: "Weather in Oslo?" },
      { role: "assistant", content: "<think>The user wants Oslo.\nI will call the tool.</think>\nLet me look.", tool_calls: foreignCall("foreign_inline_1") },
      { role: "tool", tool_call_id: "foreign_inline_1", content: "1 C" },
    ];
    const [turn] = await sent("deepseek/inline", history);
    expect(turn!.reasoning_content).toBe("The user wants Oslo.\nI will call the tool.");
    expect(turn!.content).toBe("Let me look.");
  });

  test("must_echo: stored reasoning replaces both what the client inlined and what it sent in reasoning_content", async () => {
    const history: Message[] = [{ role: "user", content: "Weather in Bergen?" }];
    const first = await ask(gateway, { model: "deepseek/inline-stored", tools: [WEATHER_TOOL], messages: history });
    expect(first.status).toBe(200);
    const id = (first.kept.tool_calls as { id: string }[])[0]!.id;
    history.push(
      { ...first.kept, content: "<think>a client's retelling</think>", reasoning_content: "another retelling" },
      { role: "tool", tool_call_id: id, content: "5 C" },
    );
    const [turn] = await sent("deepseek/inline-stored", history);
    expect(turn!.reasoning_content).toBe(first.reasoning);
    expect(turn!.content).toBe("");
  });

  test('must_echo: an Open WebUI <details type="reasoning"> rendering is cut, and not taken for reasoning (the placeholder goes)', async () => {
    const rendering = '<details type="reasoning" done="true" duration="2">\n<summary>Thought for 2 seconds</summary>\n> Oslo, then.\n</details>\nChecking.';
    const [turn] = await sent("deepseek/inline-details", [
      { role: "user", content: "Weather?" },
      { role: "assistant", content: rendering, tool_calls: foreignCall("foreign_inline_2") },
      { role: "tool", tool_call_id: "foreign_inline_2", content: "2 C" },
    ]);
    expect(turn!.reasoning_content).toBe(" ");
    expect(turn!.content).toBe("Checking.");
  });

  test("both plain fields (a local server): the inline reasoning under each, text parts cut one by one (one left empty goes), other details kept", async () => {
    const [text, parts] = await sent("local/inline", [
      { role: "user", content: "hi" },
      { role: "assistant", content: '<thinking level="2">Greet back.</thinking>Hello! <details><summary>More</summary>x</details>' },
      { role: "user", content: "again" },
      {
        role: "assistant",
        content: [
          { type: "text", text: "<think>Again?</think>" },
          { type: "text", text: "Hello again." },
        ],
      },
    ]);
    expect(text).toMatchObject({ content: "Hello! <details><summary>More</summary>x</details>", reasoning_content: "Greet back.", reasoning: "Greet back." });
    expect(parts).toMatchObject({ content: [{ type: "text", text: "Hello again." }], reasoning_content: "Again?", reasoning: "Again?" });
  });
});

test("a strict route (no field for reasoning): the content goes as the client sent it, and no carrier", async () => {
  const content = "<think>Oslo, then.</think>\nHello **world**.";
  const [turn] = await sent("mistral/inline", [
    { role: "user", content: "hi" },
    { role: "assistant", content },
  ]);
  expect(turn!.content).toBe(content);
  expect(carriersOf(turn!)).toEqual([]);
});

test("splitInlineContent: strings and text parts; content without a block is not copied", () => {
  expect(splitInlineContent("<think>R</think>\nHello")).toEqual({ content: "Hello", reasoning: "R" });
  expect(splitInlineContent("no blocks here <b>bold</b>")).toBeUndefined();
  const parts = [
    { type: "image_url", image_url: { url: "x" } },
    { type: "text", text: "plain" },
  ];
  expect(splitInlineContent(parts)).toBeUndefined();
  expect(splitInlineContent(null)).toBeUndefined();
  expect(splitInlineContent([{ type: "text", text: "◁think▷R◁/think▷A" }, ...parts])).toEqual({
    content: [{ type: "text", text: "A" }, ...parts],
    reasoning: "R",
  });
  expect(splitInlineContent([{ type: "text", text: "<reasoning>R</reasoning>" }])).toEqual({ content: "", reasoning: "R" });
});

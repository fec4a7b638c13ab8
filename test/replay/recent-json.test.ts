import { expect, test } from "vitest";
import { RecentJson } from "../../src/providers/recent-json.js";
import { chatBodyBytes } from "../../src/providers/chat-json.js";
import type { ChatRequest } from "../../src/providers/contract.js";

// A value that equals one kept is written as the kept bytes (docs/performance.md#recent-json): every answer must be
// exactly what JSON.stringify gives for the value asked about, whatever was asked before.
const text = (json: Buffer | string | undefined) => (json === undefined ? undefined : json.toString());
const tools = () => [
  {
    type: "function",
    function: {
      name: "read",
      description: "Reads a file. ".repeat(10),
      parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
    },
  },
  {
    type: "function",
    function: {
      name: "grep",
      description: "Searches. ".repeat(10),
      parameters: { type: "object", properties: { q: { type: "string" }, n: { type: "integer", minimum: -0 } } },
    },
  },
];

test("every value, asked after the kept ones, is written as JSON.stringify writes it", () => {
  const recent = new RecentJson(4, 16);
  const kept = tools();
  expect(text(recent.bytesOf(kept))).toBe(JSON.stringify(kept));
  const variants: unknown[] = [
    tools(),
    tools().reverse(),
    [...tools(), { type: "function" }],
    tools().slice(1),
    tools().map((tool) => ({ function: tool.function, type: tool.type })), // the same members in another order
    tools().map((tool) => ({ ...tool, extra: undefined })), // a member JSON leaves out
    tools().map((tool) => ({ ...tool, type: NaN })), // written as null
    tools().map((tool) => ({ ...tool, type: new Date(0) })), // written by its toJSON
    tools().map((tool) => ({ ...tool, type: Object.assign(Object.create(null), { a: 1 }) })),
    tools().map((tool) => ({ ...tool, type: "function " })),
    { 0: tools()[0], 1: tools()[1], length: 2 },
    "a string, long enough to be kept if it were an object",
    undefined,
  ];
  for (const value of variants) expect(text(recent.bytesOf(value))).toBe(JSON.stringify(value));
});

test("a kept value changed by its request afterwards does not change what is written for the next", () => {
  const recent = new RecentJson(4, 16);
  const first = tools();
  recent.bytesOf(first);
  first[0]!.function.name = "write";
  const next = tools();
  expect(text(recent.bytesOf(next))).toBe(JSON.stringify(next));
  expect(text(recent.bytesOf(first))).toBe(JSON.stringify(first));
});

test("only the most recent values are kept, and the least recently used goes first", () => {
  const recent = new RecentJson(2, 1);
  const values = [{ a: 1 }, { b: 2 }, { c: 3 }];
  for (const value of values) recent.bytesOf(value);
  for (const value of values) expect(text(recent.bytesOf({ ...value }))).toBe(JSON.stringify(value));
});

test("the upstream body is JSON.stringify's, with the agent's tools and instructions kept from a request before", () => {
  const body = (): ChatRequest => ({
    model: "m",
    messages: [
      { role: "system", content: "You are an agent. ".repeat(100) },
      { role: "developer", content: [{ type: "text", text: "Rules. ".repeat(200) }] },
      { role: "user", content: "hi" },
    ],
    tools: tools(),
  });
  const first = body();
  expect(chatBodyBytes(first).toString()).toBe(JSON.stringify(first));
  const second = body();
  expect(chatBodyBytes(second).toString()).toBe(JSON.stringify(second));
  const changed = body();
  changed.messages[0]!.content = "You are another agent. ".repeat(100);
  changed.tools![1]!.function.description = "Finds.";
  expect(chatBodyBytes(changed).toString()).toBe(JSON.stringify(changed));
});

test("values alike but for key order, types or members are never the same JSON", () => {
  const recent = new RecentJson(8, 1);
  const pairs: [unknown, unknown][] = [
    [
      { a: 1, b: 2 },
      { b: 2, a: 1 },
    ],
    [{ a: 1 }, { a: 1, b: 2 }],
    [{ a: 1, b: 2 }, { a: 1 }],
    [[1, 2], { 0: 1, 1: 2 }],
    [{ 0: 1, 1: 2 }, [1, 2]],
    [{ a: null }, { a: {} }],
    [{ a: "1" }, { a: 1 }],
  ];
  for (const [kept, value] of pairs) {
    recent.textOf(kept);
    expect(recent.textOf(value)).toBe(JSON.stringify(value));
  }
});

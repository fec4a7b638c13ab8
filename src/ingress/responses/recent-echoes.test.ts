import { expect, test } from "vitest";
import type { Json } from "../../providers/contract.js";
import { RecentEchoes } from "./recent-echoes.js";

const long = "a long description, ".repeat(60);
const tool = (name: string, extra: Record<string, Json> = {}): Json => ({
  type: "function",
  name,
  description: long,
  parameters: { type: "object", ...extra },
});

/** Values that look alike: each must get its own JSON text, whichever was seen before it. */
const lookalikes: Json[] = [
  [tool("a"), tool("b")],
  [tool("b"), tool("a")],
  [tool("a")],
  [tool("a"), tool("b"), tool("c")],
  [tool("a", { x: 1, y: 2 })],
  [tool("a", { y: 2, x: 1 })],
  [tool("a", { x: "1" })],
  [tool("a", { x: 1 })],
  [tool("a", { x: null })],
  [tool("a", { x: {} })],
  [tool("a", { x: [] })],
  [tool("a", { "1": 1, x: 1 })],
  [tool("a", { x: -0 })],
  [tool("a", { x: 1e21 })],
  [tool("a", { x: 'é\u2028"' })],
  long + long,
  `${long + long}!`,
];

test("every value gets JSON.stringify's text, from memory or not, in any order of arrival", () => {
  const recent = new RecentEchoes();
  for (let round = 0; round < 3; round++)
    for (const value of round === 1 ? [...lookalikes].reverse() : lookalikes) {
      expect(recent.textOf("tools", value)).toBe(JSON.stringify(value));
      // a fresh copy of the same value: answered from memory, the same text
      expect(recent.textOf("tools", JSON.parse(JSON.stringify(value)) as Json)).toBe(JSON.stringify(value));
    }
});

test("a value changed in place after it was serialised is serialised as it is now", () => {
  const recent = new RecentEchoes();
  const parameters: Record<string, Json> = { type: "object" };
  const tools: Json[] = [{ type: "function", name: "a", description: long, parameters }];
  expect(recent.textOf("tools", tools)).toBe(JSON.stringify(tools));
  parameters.required = ["x"];
  expect(recent.textOf("tools", tools)).toBe(JSON.stringify(tools));
  tools.push(tool("b"));
  expect(recent.textOf("tools", tools)).toBe(JSON.stringify(tools));
});

test("the same value under another member name is another member's", () => {
  const recent = new RecentEchoes();
  expect(recent.textOf("tools", [tool("a")])).toBe(JSON.stringify([tool("a")]));
  expect(recent.textOf("metadata", { note: long })).toBe(JSON.stringify({ note: long }));
});

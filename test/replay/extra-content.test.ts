import { expect, test } from "vitest";
import { shapeMessages } from "../../src/routing/carriers/shape-messages.js";
import type { CarrierPolicy, ChatMessage } from "../../src/providers/contract.js";
import { sentCarrierFields } from "../../src/routing/verdicts/unknown-field.js";

/** `extra_content` is a carrier field on each tool call: kept where a route lists it, stripped where it does not (replay rule 4). */
const policy = (fields: CarrierPolicy["fields"]): CarrierPolicy => ({
  fields,
  mustEcho: false,
  requestExtra: undefined,
  native: true,
  replay: undefined,
  routeIndex: 0,
});
const signedCall = {
  id: "c1",
  type: "function" as const,
  function: { name: "weather", arguments: "{}" },
  extra_content: { google: { thought_signature: "sig" } },
};
const history: ChatMessage[] = [
  { role: "user", content: "hi" },
  { role: "assistant", content: null, tool_calls: [signedCall, { id: "c2", type: "function", function: { name: "weather", arguments: "{}" } }] },
];

test("a route without extra_content gets every tool call without it; the client's history is untouched", () => {
  const shaped = shapeMessages(history, policy(["reasoning_content"]));
  expect(shaped[1]!.tool_calls!.map((call) => call.extra_content)).toEqual([undefined, undefined]);
  expect(shaped[1]!.tool_calls![0]).not.toHaveProperty("extra_content");
  expect(history[1]!.tool_calls![0]!.extra_content).toEqual({ google: { thought_signature: "sig" } });
  expect(shaped[0]).toBe(history[0]);
});

test("a route with extra_content gets the calls as they are, the same objects", () => {
  const shaped = shapeMessages(history, policy(["extra_content"]));
  expect(shaped[1]).toBe(history[1]);
  expect(sentCarrierFields(shaped)).toEqual(["extra_content"]);
});

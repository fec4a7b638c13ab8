import { expect, test } from "vitest";
import { modelParts, readLayout, SKIP_SIGNATURE, signedCall } from "../../plugins/gemini/parts-layout.js";
import type { ChatMessage } from "../../src/providers/contract.js";

// a signed call as Gemini produced it, and the layout the record keeps of it
const layout = readLayout({ parts: [signedCall("call_1", true, "sig-of-the-call", { city: "Paris", unit: "C" })] as never });

function replayed(args: string): ChatMessage {
  return { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: args } }] };
}

test("a call resent with the arguments it was signed with keeps its signature, whatever the key order", () => {
  const skipped: string[] = [];
  const parts = modelParts(replayed('{"unit":"C","city":"Paris"}'), layout, true, (name) => skipped.push(name));
  expect(parts).toEqual([{ functionCall: { name: "get_weather", args: { unit: "C", city: "Paris" }, id: "call_1" }, thoughtSignature: "sig-of-the-call" }]);
  expect(skipped).toEqual([]);
});

test("a call whose arguments the client reshaped goes back with the skip value, and that is told", () => {
  const skipped: string[] = [];
  const parts = modelParts(replayed('{"city":"Paris","unit":"celsius"}'), layout, true, (name) => skipped.push(name));
  expect(parts[0]!.thoughtSignature).toBe(SKIP_SIGNATURE);
  expect(skipped).toEqual(["get_weather"]);
});

test("a record written before arguments were kept replays its signature as before", () => {
  const old = readLayout({ parts: [{ type: "function_call", id: "call_1", native_id: true, thoughtSignature: "sig-of-the-call" }] });
  expect(modelParts(replayed('{"city":"Lyon"}'), old, true, () => {})[0]!.thoughtSignature).toBe("sig-of-the-call");
});

import { expect, test } from "vitest";
import { parseJsonBody } from "../../src/http/read-body.js";
import { GatewayError } from "../../src/foundation/errors/gateway-error.js";
import { arraySpan, objectSpan } from "../../src/providers/carried/json-spans.js";

// A body of 128 KiB or more is parsed member by member (docs/performance.md): it must give what JSON.parse of the
// whole text gives, and every body that is not a valid JSON object the same 400 as a small one.
const padding = "x".repeat(140 * 1024);
const large = (json: string) => Buffer.from(json.replace("PAD", padding));

function refusal(bytes: Buffer): string {
  try {
    parseJsonBody(bytes);
  } catch (error) {
    if (error instanceof GatewayError) return `${error.code}: ${error.message}`;
    throw error;
  }
  throw new Error("accepted");
}

test("a large object parses to what JSON.parse gives, key order, repeated keys and __proto__ included", () => {
  const text = `{ "model":"m", "messages":[{"role":"user","content":"PAD"}, {"role":"assistant","content":"é ✓ \\"q\\" \\\\"}],
    "tools":[{"name":"t"}], "n": -1.5e3, "model":"again", "__proto__": {"polluted": true}, "input": [] }`;
  const bytes = large(text);
  const parsed = parseJsonBody(bytes);
  expect(parsed).toEqual(JSON.parse(bytes.toString("utf8")));
  expect(Object.keys(parsed as object)).toEqual(Object.keys(JSON.parse(bytes.toString("utf8")) as object));
  expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
  expect(Object.prototype.hasOwnProperty.call(parsed, "__proto__")).toBe(true);
});

test("a large body that is not a valid JSON object is refused as a small one is", () => {
  const cases = [`{"messages":["PAD",]}`, `{"messages":["PAD"] "x":1}`, `{"a":tru,"b":"PAD"}`, `{"a":"PAD"} trailing`, `{"a":"PAD"`];
  for (const text of cases) {
    const bytes = large(text);
    expect(() => JSON.parse(bytes.toString("utf8"))).toThrow();
    let message = "";
    try {
      JSON.parse(bytes.toString("utf8"));
    } catch (error) {
      message = error instanceof Error ? error.message : String(error);
    }
    expect(refusal(bytes)).toBe(`invalid_json: request body is not valid JSON: ${message}`);
  }
  expect(refusal(large(`{"a":${"[".repeat(70)}"PAD"${"]".repeat(70)}}`))).toBe("invalid_json: JSON nested deeper than 64 levels");
  expect(parseJsonBody(large(`["PAD"]`))).toEqual([padding]);
});

test("a large body with a byte order mark parses as before, and one of invalid UTF-8 is refused", () => {
  const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), large(`{"a":"PAD"}`)]);
  expect(parseJsonBody(bom)).toEqual({ a: padding });
  const broken = Buffer.concat([large(`{"a":"PAD`), Buffer.from([0xc3, 0x28]), Buffer.from(`"}`)]);
  expect(refusal(broken)).toBe("invalid_json: request body is not valid UTF-8");
});

test("the spans kept from a large body's parse are the ones a fresh read of its bytes finds (a carried body is spliced along them)", () => {
  const text = `{ "model":"m", "messages":[{"role":"user","content":"PAD"}, 7, [1,{"k":"]"}], {"role":"assistant","content":[{"type":"text","text":"}"}]}],
    "input": [ ], "messages": [ "again" ] , "tail": {"deep": [true]} }`;
  const bytes = large(text);
  parseJsonBody(bytes);
  const copy = Buffer.from(bytes);
  const top = objectSpan(bytes, 0);
  expect(top).toBe(objectSpan(bytes, 0)); // kept, not read again
  expect(top).toEqual(objectSpan(copy, 0));
  for (const member of top.members.filter((member) => bytes[member.valueStart] === 0x5b))
    expect(arraySpan(bytes, member.valueStart)).toEqual(arraySpan(copy, member.valueStart));
});

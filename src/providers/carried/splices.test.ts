import { expect, test } from "vitest";
import { openCarriedBody, spliceTopLevel } from "./carried-top.js";
import { arraySpan, memberOf, objectSpan } from "./json-spans.js";

const TEXT = `{ "model" : "a\\"b",\n  "messages": [ {"role":"user","content":"x]}\\\\"} , 7, [1,{"k":"}"}] ],
  "max_tokens": 10, "extra": null , "last": {"deep": [true, false]} }`;

test("spans: every member and element where JSON.parse finds it, strings with quotes, brackets and backslashes skipped", () => {
  const bytes = Buffer.from(TEXT);
  const top = objectSpan(bytes, 0);
  expect(top.members.map((member) => member.key)).toEqual(["model", "messages", "max_tokens", "extra", "last"]);
  const parsed = JSON.parse(TEXT) as Record<string, unknown>;
  for (const member of top.members) expect(JSON.parse(bytes.toString("utf8", member.valueStart, member.valueEnd))).toEqual(parsed[member.key]);
  const messages = arraySpan(bytes, memberOf(top, "messages")!.valueStart);
  expect(messages.elements.map((element) => JSON.parse(bytes.toString("utf8", element.start, element.end)))).toEqual(parsed.messages);
});

test("removing any set of members leaves the JSON of the object without them; the rest keeps its bytes", () => {
  const keys = ["model", "messages", "max_tokens", "extra", "last"];
  for (let mask = 1; mask < 1 << keys.length; mask++) {
    const body = openCarriedBody(Buffer.from(TEXT));
    const removed = new Set(body.top.members.filter((_, index) => mask & (1 << index)));
    body.splices.removeMembers(body.top, removed);
    body.splices.appendMembers(body.top, [["added", "1"]], removed.size < keys.length);
    const expected = Object.fromEntries(Object.entries(JSON.parse(TEXT) as object).filter((_, index) => !(mask & (1 << index))));
    expect(JSON.parse(body.splices.apply().toString())).toEqual({ ...expected, added: 1 });
  }
});

test("the model and the route's settings: only those members change", () => {
  const body = openCarriedBody(Buffer.from(TEXT));
  spliceTopLevel(body, "upstream-model", { defaults: { max_tokens: 99, top_k: 5 }, overrides: { last: { deep: [1], more: 2 } } });
  const out = body.splices.apply().toString();
  expect(JSON.parse(out)).toEqual({ ...(JSON.parse(TEXT) as object), model: "upstream-model", top_k: 5, last: { deep: [1], more: 2 } });
  // the messages keep their bytes, spacing and escapes included
  expect(out).toContain(`"messages": [ {"role":"user","content":"x]}\\\\"} , 7, [1,{"k":"}"}] ]`);
});

test("an array rewritten: the client's elements by index, new ones as JSON", () => {
  const body = openCarriedBody(Buffer.from(TEXT));
  const messages = arraySpan(body.bytes, memberOf(body.top, "messages")!.valueStart);
  body.splices.rewriteArray(messages, [{ json: '{"new":true}' }, 2, 0]);
  const parsed = JSON.parse(TEXT) as { messages: unknown[] };
  expect((JSON.parse(body.splices.apply().toString()) as { messages: unknown[] }).messages).toEqual([{ new: true }, parsed.messages[2], parsed.messages[0]]);
});

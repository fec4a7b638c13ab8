import { describe, expect, test } from "vitest";
import { chatBodyBytes } from "../../src/providers/chat-json.js";
import type { ChatMessage, ChatRequest } from "../../src/providers/contract.js";
import { noteListedMessages, scanRequestStrings } from "../../src/ingress/request-strings.js";
import { convertInput } from "../../src/ingress/responses/convert-input.js";
import { toChatRequest, type ResponsesRequest } from "../../src/ingress/responses/request.js";

// docs/performance.md#request-string-bytes: whatever the client's bytes look like, the upstream body is JSON.stringify's

const long = (text: string) => text.repeat(Math.ceil(300 / text.length));

/** A chat body as the chat adapter handles it: parsed, its messages noted from the bytes, then written. */
function chatRoundTrip(bodyText: string): { written: string; expected: string; body: ChatRequest } {
  const bytes = Buffer.from(bodyText);
  const body = JSON.parse(bodyText) as ChatRequest;
  noteListedMessages(scanRequestStrings(bytes, "messages"), body.messages);
  return { written: chatBodyBytes(body).toString(), expected: JSON.stringify(body), body };
}

const tricky: Record<string, string> = {
  plain: JSON.stringify(long('a tool\'s output\n\twith "quotes" and \\ backslashes ')),
  "non-ASCII": JSON.stringify(long("déjà vu ✓ 🙂 \u2028 line separator ")),
  "escaped slash": `"${long("a\\/b ")}"`,
  "escaped letter": `"${long("\\u0041 ")}"`,
  "escaped non-ASCII": `"${long("\\u00e9\\ud83d\\ude00 ")}"`,
  "uppercase control escape": `"${long("\\u001F ")}"`,
  "lowercase control escape": `"${long("\\u001f\\u0000 ")}"`,
  "long escape of a short one": `"${long("\\u000a ")}"`,
  "lone surrogate": `"${long("\\ud800 ")}"`,
};

describe("a chat request's messages written from the client's bytes", () => {
  for (const [name, json] of Object.entries(tricky)) {
    test(`a long string, ${name}`, () => {
      for (const bodyText of [
        `{"model":"m","messages":[{"role":"user","content":${json}},{"role":"tool","tool_call_id":"c","content":${json}}]}`,
        `{ "model": "m", "messages": [ { "role": "user", "content": ${json} } ] }`,
        `{"messages":[{"role":"user","content":${json},"n":1.0,"x":[1e3,-0,{"b":1,"2":3}]}],"model":"m"}`,
      ]) {
        const { written, expected } = chatRoundTrip(bodyText);
        expect(written).toBe(expected);
      }
    });
  }

  test("a repeated key, an escaped key, numbers and keys JSON.stringify writes otherwise", () => {
    const text = tricky.plain!;
    for (const bodyText of [
      `{"model":"m","messages":[{"role":"user","content":${text},"content":"short"}]}`,
      `{"model":"m","messages":[{"role":"user","content":"short","content":${text}}]}`,
      `{"model":"m","messages":[{"role":"user","con\\u0074ent":${text},"content":"short"}]}`,
      `{"model":"m","messages":[{"role":"user","content":${text}}],"messages":[{"role":"user","content":"later"}]}`,
      `{"model":"m","messages":[{"role":"user","content":${text},"1":true,"0":null,"a":1.50,"b":1E2,"c":1e21}]}`,
      `{"model":"m","messages":[{"role":"user","content":${text},"nested":{"k":1,"k":2}}]}`,
      `{"model":"m","messages":[{"role":"user","content":${text}} , "not an object", [1, 2], null]}`,
    ]) {
      const { written, expected } = chatRoundTrip(bodyText);
      expect(written).toBe(expected);
    }
  });

  test("a message the pipeline changed after parsing is written as it is now", () => {
    const { body } = chatRoundTrip(`{"model":"m","messages":[{"role":"tool","tool_call_id":"c","content":${tricky.plain}}]}`);
    const shaped: ChatMessage = { ...body.messages[0]!, content: "replaced" };
    const changed = { ...body, messages: [shaped, { ...body.messages[0]!, role: "user" }] };
    expect(chatBodyBytes(changed).toString()).toBe(JSON.stringify(changed));
  });

  test("a string changed in place is written as it is now", () => {
    // spaced out: not exact as a whole, so its long string alone is noted
    const { body } = chatRoundTrip(`{"model":"m", "messages":[{"role": "tool","tool_call_id":"c","content":${tricky.plain}}]}`);
    body.messages[0]!.content = "replaced";
    expect(chatBodyBytes(body).toString()).toBe(JSON.stringify(body));
  });

  test("once the request is done, the bytes are let go and the messages serialised anew", () => {
    const bytes = Buffer.from(`{"model":"m","messages":[{"role":"user","content":${tricky.plain}}]}`);
    const body = JSON.parse(bytes.toString()) as ChatRequest;
    const strings = scanRequestStrings(bytes, "messages")!;
    noteListedMessages(strings, body.messages);
    strings.body.release();
    bytes.fill(0x20); // nothing of the released body may be read
    expect(chatBodyBytes(body).toString()).toBe(JSON.stringify(body));
  });
});

describe("which bytes the scan vouches for", () => {
  const scanOf = (bodyText: string) => scanRequestStrings(Buffer.from(bodyText), "messages");
  test("an exact message whole; a spaced one by its long strings; none with a repeated key or an escape JSON.stringify does not write", () => {
    const text = tricky.plain!;
    const exact = `{"role":"tool","tool_call_id":"c","content":${text}}`;
    const spaced = `{"role": "tool","content":${text}}`;
    const strings = scanOf(`{"model":"m","messages":[${exact},${spaced},{"content":${tricky["escaped slash"]}},{"content":${text},"content":"x"}]}`)!;
    expect(strings.elements.map((element) => [element.whole !== undefined, element.members.map((member) => member.key)])).toEqual([
      [true, ["content"]],
      [false, ["content"]],
      [false, []],
      [false, []],
    ]);
    expect(Buffer.from(`{"model":"m","messages":[${exact}]}`).subarray(strings.elements[0]!.whole!.start, strings.elements[0]!.whole!.end).toString()).toBe(
      exact,
    );
    expect(scanOf(`{"model":"m","messages":[],"messages":[]}`)).toBeUndefined();
    expect(scanOf(`{"model":"m","messag\\u0065s":[]}`)).toBeUndefined();
    expect(scanOf(`{"model":"m","messages":{}}`)).toBeUndefined();
  });
});

describe("a Responses request's strings written from the client's bytes", () => {
  test("tool outputs, input messages and the instructions", () => {
    const output = tricky["non-ASCII"]!;
    const escaped = tricky["escaped letter"]!;
    const bodyText =
      `{"model":"m","instructions":${tricky.plain},"input":[` +
      `{"type":"message","role":"user","content":${escaped}},` +
      `{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},` +
      `{"type":"function_call_output","call_id":"c1","output":${output}},` +
      `{"type":"function_call_output","call_id":"c1","output": ${output}},` +
      `{"type":"message","role":"developer","content":${output}}]}`;
    const bytes = Buffer.from(bodyText);
    const body = JSON.parse(bodyText) as ResponsesRequest;
    const strings = scanRequestStrings(bytes, "input");
    expect(strings).toBeDefined();
    const input = convertInput(body.input, () => undefined, undefined, undefined, strings);
    const request = toChatRequest(body, [], input, false, undefined, strings);
    expect(chatBodyBytes(request).toString()).toBe(JSON.stringify(request));
  });
});

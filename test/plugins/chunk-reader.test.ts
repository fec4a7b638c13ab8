import { readdirSync } from "node:fs";
import { join } from "node:path";
import { expect, test, vi } from "vitest";
import { chunkReader } from "../../plugins/openai-compatible/chunk-reader.js";
import { CHUNKS_DIR, fixtureLines } from "../support/fixtures-dir.js";

/** The reader's view must be exactly what a whole parse gives: the first choice (when it is an object), and every top-level member. Returns how many chunks took the short path. */
function expectSameAsWholeParse(lines: readonly string[]): number {
  const read = chunkReader();
  let fast = 0;
  for (const data of lines) {
    let whole: unknown;
    try {
      whole = JSON.parse(data);
    } catch {
      expect(read(data)).toBeUndefined();
      continue;
    }
    const view = read(data);
    if (whole === null || typeof whole !== "object" || Array.isArray(whole)) {
      expect(view).toBeUndefined();
      continue;
    }
    const object = whole as Record<string, unknown>;
    // a first choice that is not an object (null, a number, an array) is no choice: the codec has nothing to read there
    const first: unknown = Array.isArray(object.choices) ? object.choices[0] : undefined;
    const choice = first !== null && typeof first === "object" && !Array.isArray(first) ? (first as Record<string, unknown>) : undefined;
    if (view!.plain) {
      // read without a parse: all the codec reads of such a choice is one delta string and no finish
      expect(view!.choice).toBeUndefined();
      const field = Object.keys(choice!.delta as object)[0]!;
      expect(view!.plain.type).toBe(field === "content" ? "text-delta" : "reasoning-delta");
      expect(choice!.delta).toEqual({ [field]: view!.plain.text });
      expect(choice!.finish_reason ?? null).toBeNull();
    } else {
      expect(view!.choice).toEqual(choice);
    }
    const { choices: _choices, ...members } = object;
    const { choices: _viewChoices, ...viewMembers } = view!.fields;
    expect(viewMembers).toEqual(members);
    if (!("choices" in view!.fields)) fast++; // the envelope's members, shared: only the choice was parsed
  }
  return fast;
}

const envelope = (id: string, delta: string, tail = "") =>
  `{"id":${JSON.stringify(id)},"object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":${delta},"finish_reason":null}]${tail}}`;

test("every recorded stream reads the same as a whole parse of each chunk", () => {
  const recordings = readdirSync(CHUNKS_DIR, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((dir) =>
      readdirSync(join(CHUNKS_DIR, dir.name))
        .filter((file) => file.endsWith(".chunks.txt"))
        .map((file) => `${dir.name}/${file.replace(/\.chunks\.txt$/, "")}`),
    );
  expect(recordings.length).toBeGreaterThan(10);
  let fast = 0;
  for (const name of recordings) fast += expectSameAsWholeParse(fixtureLines(name));
  expect(fast).toBeGreaterThan(100); // the recorded OpenAI-style streams do take the short path
});

test("chunks that only look like the envelope are read whole, and read right", () => {
  const lines = [
    envelope("a", '{"reasoning_content":"x"}'),
    envelope("a", '{"content":"y"}'),
    envelope("a", '{"content":"z"}', ',"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}'),
    `${envelope("a", '{"content":"w"}').slice(0, -2)},{"index":1,"delta":{"content":"second"}}]}`,
    `${envelope("a", "{}").slice(0, -2)}],"x":[1]}`,
    `${envelope("a", "{}")
      .slice(0, -2)
      .replace(/\{"index":0.*$/, "")}[1]]}`,
    `${envelope("a", "{}")
      .slice(0, -2)
      .replace(/\{"index":0.*$/, "")}"text"]}`,
    `${envelope("a", "{}")
      .slice(0, -2)
      .replace(/\{"index":0.*$/, "")}]}`,
    envelope('b","choices":[', '{"content":"quoted key in a value"}'),
    envelope("a", '{"content":"after"}'),
    '{"meta":{"choices":[1]},"choices":[{"delta":{"content":"nested"}}]}',
    '{"meta":{"choices":[1]},"choices":[{"delta":{"content":"nested again"}}]}',
    '{ "id": "spaced", "choices": [ { "delta": { "content": "s" } } ] }',
    '{"choices":[{"delta":{"content":"choices first"}}]}',
    '{"choices":[{"delta":{"content":"choices first again"}}]}',
    '{"error":{"message":"boom"},"choices":[{"delta":{}}]}',
    "not json",
    "[1,2]",
    "null",
    envelope("a", '{"content":"last"}'),
  ];
  expect(expectSameAsWholeParse(lines)).toBeGreaterThanOrEqual(2); // the plain ones after the first took the short path
});

test("plain text deltas after the first of their kind are read without a parse, and exactly as a parse reads them", () => {
  const texts = [
    "plain",
    "",
    "é ✓ 🙂",
    'quote " inside',
    "back\\slash",
    "new\nline",
    "tab\t",
    "\u2028",
    'a"},"finish_reason":"stop","x":{"content":"b',
    "\u0001",
  ];
  const lines = [
    envelope("a", '{"role":"assistant","content":""}'),
    envelope("a", '{"reasoning_content":"first"}'),
    envelope("a", '{"content":"first"}'),
    ...texts.flatMap((text) => [envelope("a", `{"reasoning_content":${JSON.stringify(text)}}`), envelope("a", `{"content":${JSON.stringify(text)}}`)]),
    envelope("a", '{"content":"raw \u0001 control"}'), // not JSON: a raw control character in a string
    envelope("a", '{"content": "spaced"}'),
    envelope("a", '{"content":"x","reasoning_content":"y"}'),
    envelope("a", '{"content":"done"}').replace('"finish_reason":null', '"finish_reason":"stop"'),
  ];
  expectSameAsWholeParse(lines);

  const read = chunkReader();
  read(envelope("a", '{"reasoning_content":"learn"}'));
  read(envelope("a", '{"reasoning_content":"learn"}'));
  const parse = vi.spyOn(JSON, "parse");
  try {
    for (let i = 0; i < 50; i++)
      expect(read(envelope("a", `{"reasoning_content":" step ${i}"}`))!.plain).toEqual({ type: "reasoning-delta", text: ` step ${i}` });
    expect(parse).not.toHaveBeenCalled();
  } finally {
    parse.mockRestore();
  }
});

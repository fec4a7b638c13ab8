import { createHash } from "node:crypto";
import { expect, test } from "vitest";
import type { ChatMessage } from "../../src/providers/contract.js";
import { RecentHeads, type HeadColumns } from "../../src/storage/recent-heads.js";

// recent heads (src/storage/recent-heads.ts): a head reused is one whose JSON is the same, byte for byte
const made: ChatMessage[][] = [];
const make = (messages: readonly ChatMessage[]): HeadColumns => {
  made.push([...messages]);
  const text = JSON.stringify(messages);
  return { hash: createHash("sha256").update(text).digest("hex"), text };
};
const parts = (text: string): ChatMessage => ({
  role: "system",
  content: [
    { type: "text", text: "x-anthropic-billing-header: cc_version=2.1" },
    { type: "text", text: "You are Claude Code.", cache_control: { type: "ephemeral" } },
    { type: "text", text, cache_control: { type: "ephemeral", ttl: "1h" } },
  ],
});
const copy = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

test("a system message of text parts (an Anthropic route's) equal to a recent one reuses its columns", () => {
  const heads = new RecentHeads();
  made.length = 0;
  const first = [parts("Follow the rules. ".repeat(200))];
  const columns = heads.columnsOf(first, make);
  // the request's objects change after: the kept copy does not
  (first[0].content as { text: string }[])[2].text = "changed";
  expect(heads.columnsOf(copy([parts("Follow the rules. ".repeat(200))]), make)).toBe(columns);
  expect(made).toHaveLength(1);
  expect(heads.columnsOf(first, make)?.text).toBe(JSON.stringify(first));
  expect(made).toHaveLength(2);
});

test("whatever a head is, its columns are its own JSON's: every variant differing anywhere is another head", () => {
  const heads = new RecentHeads();
  const base = parts("Follow the rules.");
  const variants: unknown[] = [
    base,
    { ...base, content: [...(base.content as object[]), { type: "text", text: "" }] },
    { content: base.content, role: "system" },
    { ...base, content: (base.content as object[]).slice(0, 2) },
    { ...base, content: [{ text: "x-anthropic-billing-header: cc_version=2.1", type: "text" }, ...(base.content as object[]).slice(1)] },
    {
      ...base,
      content: [...(base.content as object[]).slice(0, 2), { type: "text", text: "Follow the rules.", cache_control: { type: "ephemeral", ttl: 1 } }],
    },
    {
      ...base,
      content: [...(base.content as object[]).slice(0, 2), { type: "text", text: "Follow the rules.", cache_control: { type: "ephemeral", ttl: "1" } }],
    },
    { ...base, content: [...(base.content as object[]).slice(0, 2), { type: "text", text: "Follow the rules.", cache_control: null }] },
    { ...base, content: [...(base.content as object[]).slice(0, 2), { type: "text", text: "Follow the rules.", cache_control: [] }] },
    { ...base, content: [...(base.content as object[]).slice(0, 2), { type: "text", text: "Follow the rules.", cache_control: {} }] },
    { ...base, content: [...(base.content as object[]).slice(0, 2), { type: "text", text: "Follow the rules.", cache_control: { type: true } }] },
    {
      ...base,
      content: [...(base.content as object[]).slice(0, 2), { type: "text", text: "Follow the rules.", cache_control: { type: "ephemeral" }, extra: undefined }],
    },
    { ...base, content: [...(base.content as object[]).slice(0, 2), { type: "text", text: "Follow the rules.", n: -0 }] },
    { ...base, content: [...(base.content as object[]).slice(0, 2), { type: "text", text: "Follow the rules.", n: 0 }] },
    { ...base, content: [...(base.content as object[]).slice(0, 2), { type: "text", text: "Follow the rules.", n: NaN }] },
    { ...base, content: [...(base.content as object[]).slice(0, 2), { type: "text", text: "Follow the rules.", at: new Date(0) }] },
    { ...base, content: [...(base.content as object[]).slice(0, 2), [undefined, null]] },
    { ...base, content: [...(base.content as object[]).slice(0, 2), [null, null]] },
    { ...base, content: "Follow the rules." },
  ];
  // each seen twice, in turns: a reused head is found among several kept
  for (const round of [0, 1]) {
    for (const variant of variants) {
      const messages = [round === 0 ? variant : copyKeepingOddities(variant)] as ChatMessage[];
      expect(heads.columnsOf(messages, make)?.text).toBe(JSON.stringify(messages));
    }
  }
});

test("heads of plain strings are reused as before; one holding a class instance is made each time", () => {
  const heads = new RecentHeads();
  made.length = 0;
  const plain: ChatMessage[] = [
    { role: "system", content: "Be brief." },
    { role: "developer", content: "Use tools." },
  ];
  const columns = heads.columnsOf(plain, make);
  expect(heads.columnsOf(copy(plain), make)).toBe(columns);
  const dated = [{ role: "system", content: [{ type: "text", text: "t", at: new Date(0) }] }] as unknown as ChatMessage[];
  heads.columnsOf(dated, make);
  heads.columnsOf(dated, make);
  expect(made).toHaveLength(3);
});

/** A copy that keeps what JSON would lose (undefined fields, NaN, -0, class instances): the variant itself, made anew. */
function copyKeepingOddities(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(copyKeepingOddities);
  if (value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([key, field]) => [key, copyKeepingOddities(field)]));
  }
  return value;
}

import { expect, test } from "vitest";
import { MessageBlocks, type BlockSink } from "../../src/ingress/messages/message-blocks.js";
import type { StreamPart } from "../../src/providers/contract.js";

// A whole answer folds its blocks without a sink (no event is rendered): its
// content must be what a stream's blocks give for the same parts.

const PARTS: StreamPart[] = [
  { type: "reasoning-delta", text: "Let me " },
  { type: "reasoning-delta", text: 'look at "it".' },
  { type: "text-delta", text: "Reading the file." },
  { type: "tool-call-delta", index: 0, id: "call_1", name: "read", arguments: '{"path":' },
  { type: "tool-call-delta", index: 1, id: "call_2", name: "list", arguments: '{"dir":"src"}' },
  { type: "tool-call-delta", index: 0, arguments: '"a.ts"}' },
  { type: "reasoning-delta", text: "Then compare." },
  {
    type: "native-record",
    record: {
      content: [
        { type: "thinking", signature: "upstream-sig" },
        { type: "redacted_thinking", data: "opaque" },
      ],
    },
  },
  { type: "text-delta", text: "Done." },
];

const recorder = (): BlockSink & { events: string[] } => {
  const events: string[] = [];
  return { events, event: (name, json) => events.push(`${name} ${json}`), delta: (_frame, json) => events.push(`delta ${json}`) };
};

function fold(options: { upstreamSignatures: boolean; omitThinkingText: boolean }, sink?: BlockSink): MessageBlocks {
  const blocks = new MessageBlocks(options, sink);
  for (const part of PARTS) blocks.add(part);
  blocks.finish();
  blocks.seal(blocks.awaitsSignature ? "turn-envelope" : undefined);
  return blocks;
}

test.each([
  { upstreamSignatures: false, omitThinkingText: false },
  { upstreamSignatures: false, omitThinkingText: true },
  { upstreamSignatures: true, omitThinkingText: false },
])("a whole answer's blocks are a stream's blocks (%o)", (options) => {
  const sink = recorder();
  const streamed = fold(options, sink);
  const whole = fold(options);
  expect(sink.events.length).toBeGreaterThan(0);
  expect(whole.content()).toEqual(streamed.content());
  expect(whole.reasoningSoFar).toBe(streamed.reasoningSoFar);
  expect(whole.holding).toBe(false);
  expect(whole.content().some((block) => block.type === "tool_use" && block.id === "call_1")).toBe(true);
});

import { expect, test } from "vitest";
import type { Checkpoint } from "../../src/storage/checkpoints.js";
import { applyCheckpoint, SUMMARY_INDEX, SUMMARY_PREFIX } from "../../src/turn/compaction/view.js";
import type { ChatMessage } from "../../src/providers/contract.js";

const history: ChatMessage[] = [
  { role: "user", content: "first" },
  { role: "assistant", content: "a1", reasoning_content: "r1" },
  { role: "user", content: "second" },
  { role: "assistant", content: "a2", reasoning_content: "r2" },
  { role: "user", content: "third" },
  { role: "assistant", content: "a3", reasoning_content: "r3" },
];

function checkpoint(headCount: number, cutIndex: number): Checkpoint {
  return {
    id: "ckpt_x",
    sessionId: "s",
    anchorResponseId: "resp_x",
    headCount,
    cutIndex,
    summary: "S",
    summarizer: "demo",
    summarizedMessages: cutIndex - headCount,
    archivedTurns: 1,
    archivedThrough: 2,
    tokensBefore: 10,
    tokensAfter: 5,
    createdAt: "",
  };
}

test("under a checkpoint: the head, the summary as a user message, then the stored messages from the cut, the same objects", () => {
  const view = applyCheckpoint(history, checkpoint(1, 4));
  expect(view.map((entry) => entry.index)).toEqual([0, SUMMARY_INDEX, 4, 5]);
  expect(view[1]!.message).toEqual({ role: "user", content: `${SUMMARY_PREFIX}\n\nS` });
  expect(view[2]!.message).toBe(history[4]);
  expect(view[3]!.message).toBe(history[5]);
});

test("a cut at the history's end keeps only head and summary; messages added later follow the summary", () => {
  expect(applyCheckpoint(history, checkpoint(1, 6)).map((entry) => entry.index)).toEqual([0, SUMMARY_INDEX]);
  const longer = [...history, { role: "user" as const, content: "fourth" }];
  expect(applyCheckpoint(longer, checkpoint(1, 6)).map((entry) => entry.index)).toEqual([0, SUMMARY_INDEX, 6]);
});

test("no checkpoint, or one that does not fit this history, leaves the history whole", () => {
  expect(applyCheckpoint(history, undefined).map((entry) => entry.index)).toEqual([0, 1, 2, 3, 4, 5]);
  expect(applyCheckpoint(history, checkpoint(1, 9)).map((entry) => entry.index)).toEqual([0, 1, 2, 3, 4, 5]);
  expect(applyCheckpoint(history, checkpoint(5, 3)).map((entry) => entry.index)).toEqual([0, 1, 2, 3, 4, 5]);
});

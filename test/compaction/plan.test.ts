import { expect, test } from "vitest";
import { AFTER_SHARE, planCompaction, SUMMARY_SHARE } from "../../src/turn/compaction/plan.js";
import { priceJson, priceRequest } from "../../src/turn/compaction/price.js";
import type { ChatMessage } from "../../src/providers/contract.js";

type Role = ChatMessage["role"];

test("priceJson: UTF-8 bytes of the JSON over four, so CJK and opaque blobs cost what they weigh", () => {
  expect(priceJson("abcd")).toBe(2); // "abcd" with its quotes is six bytes
  expect(priceJson("文字")).toBe(2); // two 3-byte characters and quotes: eight bytes
  const blob = "A".repeat(4000);
  expect(priceJson({ role: "assistant", reasoning_details: [{ type: "reasoning.encrypted", data: blob }] })).toBeGreaterThan(1000);
});

test("priceRequest: per-message prices plus the rest add up to the whole", () => {
  const priced = priceRequest({
    model: "m",
    messages: [
      { role: "user", content: "hi" },
      { role: "assistant", content: "there" },
    ],
    tools: [{ type: "function" }],
  });
  expect(priced.messages).toHaveLength(2);
  expect(priced.total).toBe(priced.messages[0]! + priced.messages[1]! + priced.rest);
});

test("keeps the head, fills the tail up to its share, and cuts only where no tool result loses its call", () => {
  // system, first user, then five exchanges of assistant(call) + tool + assistant + user
  const roles: Role[] = ["system", "user"];
  for (let turn = 0; turn < 5; turn++) roles.push("assistant", "tool", "assistant", "user");
  const costs = roles.map(() => 100);
  const budget = 2000;
  const plan = planCompaction({ roles, costs, fixed: 50, budget, inputStartsWithTool: false });
  if ("reason" in plan) throw new Error(plan.reason);
  expect(plan.head).toBe(2);
  expect(plan.summaryCap).toBe(Math.floor(budget * SUMMARY_SHARE));
  const target = budget * AFTER_SHARE - 50 - 200 - plan.summaryCap;
  expect(plan.tailCost).toBeLessThanOrEqual(target);
  // one more message would not have fitted, or would have split a call from its result
  expect(plan.tailCost + 100 > target || roles[plan.cut - 1] === "tool").toBe(true);
  expect(roles[plan.cut]).not.toBe("tool");
  expect(plan.tailCost).toBe(costs.slice(plan.cut).reduce((sum, cost) => sum + cost, 0));
});

test("a new input of tool results keeps the call it answers, even over the target", () => {
  const roles: Role[] = ["user", "assistant", "user", "assistant"];
  const costs = [10, 10, 10, 5000];
  const plan = planCompaction({ roles, costs, fixed: 10, budget: 1000, inputStartsWithTool: true });
  if ("reason" in plan) throw new Error(plan.reason);
  expect(plan.cut).toBe(3); // the assistant call stays although it alone is over the tail's share
  expect(plan.tailCost).toBe(5000);
});

test("with nothing that fits, the tail is empty: everything after the head is summarised", () => {
  const plan = planCompaction({
    roles: ["user", "assistant", "user", "assistant"],
    costs: [10, 900, 10, 900],
    fixed: 10,
    budget: 1000,
    inputStartsWithTool: false,
  });
  if ("reason" in plan) throw new Error(plan.reason);
  expect(plan).toMatchObject({ head: 1, cut: 4, tailCost: 0 });
});

test("no user message, or only tool results after the head: nothing to compact", () => {
  expect(planCompaction({ roles: ["assistant", "assistant"], costs: [500, 500], fixed: 0, budget: 100, inputStartsWithTool: false })).toHaveProperty("reason");
  expect(planCompaction({ roles: ["user", "tool"], costs: [10, 500], fixed: 0, budget: 100, inputStartsWithTool: true })).toHaveProperty("reason");
});

import { afterAll, beforeAll, expect, test } from "vitest";
import { startTestGateway, DEMO_ROUTES, type TestGateway } from "../support/gateway.js";
import { parseEvents } from "./responses-order.js";
import { readFixture } from "../support/fixtures-dir.js";

/** Fields a real stream has that carrierd has no value for: anti-side-channel padding, OpenAI's encrypted reasoning, xAI's search counters. */
const NOT_OURS = new Set(["obfuscation", "encrypted_content", "num_sources_used", "num_server_side_tools_used"]);

/** The field names of every event type, and of the objects inside (`response`, `item` per type, `part`, `usage`). */
function shapes(events: Record<string, unknown>[]): Map<string, Set<string>> {
  const found = new Map<string, Set<string>>();
  const note = (name: string, value: unknown) => {
    if (!value || typeof value !== "object" || Array.isArray(value)) return;
    const keys = (found.get(name) ?? found.set(name, new Set()).get(name))!;
    for (const key of Object.keys(value)) if (!NOT_OURS.has(key)) keys.add(key);
  };
  for (const event of events) {
    note(event.type as string, event);
    note("response", event.response);
    note("usage", (event.response as { usage?: unknown } | undefined)?.usage);
    note(`part:${(event.part as { type?: string } | undefined)?.type}`, event.part);
    const item = event.item as { type?: string } | undefined;
    note(`item:${item?.type}`, item);
  }
  return found;
}

function recorded(file: string): Record<string, unknown>[] {
  return readFixture(`chunks/${file}`)
    .split("\n")
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

let gateway: TestGateway;
beforeAll(async () => {
  gateway = await startTestGateway({ routes: DEMO_ROUTES });
});
afterAll(() => gateway?.stop());

test("every field real OpenAI and xAI Responses streams carry, carrierd's events carry too", async () => {
  const ours: Record<string, unknown>[] = [];
  for (const body of [
    { model: "demo", input: "How many r's are in strawberry?", stream: true },
    {
      model: "demo",
      input: "Weather in Paris?",
      stream: true,
      tools: [{ type: "function", name: "weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } }],
    },
  ]) {
    ours.push(...parseEvents(await (await gateway.post("/v1/responses", body)).text()).map((event) => event.data));
  }
  const mine = shapes(ours);
  let compared = 0;
  for (const file of ["openai/openai-reasoning-encrypted-content.1.chunks.txt", "xai/xai-text-with-reasoning-streaming.1.chunks.txt"]) {
    for (const [name, keys] of shapes(recorded(file))) {
      const have = mine.get(name);
      if (!have) continue; // an event type carrierd never sends (e.g. web search)
      compared++;
      expect(
        [...keys].filter((key) => !have.has(key)),
        `${file}: ${name}`,
      ).toEqual([]);
    }
  }
  expect(compared).toBeGreaterThan(15);
});

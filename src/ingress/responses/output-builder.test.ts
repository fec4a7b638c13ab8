import { expect, test } from "vitest";
import type { JsonObject, StreamPart } from "../../providers/contract.js";
import { OutputBuilder, type OutputSink } from "./output-builder.js";

function recorder(): OutputSink & { events: { type: string; fields: JsonObject }[] } {
  const events: { type: string; fields: JsonObject }[] = [];
  return {
    events,
    emit: (type, fields) => events.push({ type, fields }),
    emitDelta: (type, head, delta) => events.push({ type, fields: { ...(JSON.parse(`{${head}}`) as JsonObject), delta } }),
  };
}

test("interleaved thinking: every burst is its own item, each closed before the next opens", () => {
  const sink = recorder();
  const builder = new OutputBuilder(sink);
  const parts: StreamPart[] = [
    { type: "reasoning-delta", text: "plan" },
    { type: "tool-call-delta", index: 0, id: "call_1", name: "search", arguments: '{"q":' },
    { type: "tool-call-delta", index: 0, arguments: '"x"}' },
    { type: "reasoning-delta", text: "again" },
    { type: "text-delta", text: "" },
    { type: "text-delta", text: "done" },
    { type: "finish", reason: "stop" },
  ];
  for (const part of parts) builder.add(part);
  const items = builder.finish();
  expect(items.map((item) => item.type)).toEqual(["reasoning", "function_call", "reasoning", "message"]);
  expect(items[1]).toMatchObject({ call_id: "call_1", name: "search", arguments: '{"q":"x"}', status: "completed" });
  expect(items[2]).toMatchObject({ summary: [{ type: "summary_text", text: "again" }] });
  const opens = sink.events.filter((event) => event.type === "response.output_item.added").map((event) => event.fields.output_index);
  const closes = sink.events.filter((event) => event.type === "response.output_item.done").map((event) => event.fields.output_index);
  expect(opens).toEqual([0, 1, 2, 3]);
  expect(closes).toEqual([0, 1, 2, 3]);
  // strictly alternating: added(n), …, done(n), added(n+1)
  const lifecycle = sink.events.filter((event) => event.type.startsWith("response.output_item."));
  lifecycle.forEach((event, index) => expect(event.type).toBe(index % 2 === 0 ? "response.output_item.added" : "response.output_item.done"));
  expect(builder.finishReason).toBe("stop");
});

test("a late fragment of an already closed call still lands in the final item", () => {
  const builder = new OutputBuilder();
  builder.add({ type: "tool-call-delta", index: 0, id: "a", name: "f", arguments: "{" });
  builder.add({ type: "tool-call-delta", index: 1, id: "b", name: "g", arguments: "{}" });
  builder.add({ type: "tool-call-delta", index: 0, arguments: "}" });
  expect(builder.finish().map((item) => item.arguments)).toEqual(["{}", "{}"]);
});

test("a call without an upstream id gets a call_ id the client can answer", () => {
  const builder = new OutputBuilder();
  builder.add({ type: "tool-call-delta", index: 0, name: "f", arguments: "{}" });
  expect(builder.finish()[0]!.call_id).toMatch(/^call_/);
});

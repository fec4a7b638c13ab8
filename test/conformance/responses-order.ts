import { expect } from "vitest";

export interface SseEvent {
  event: string | undefined;
  data: Record<string, unknown>;
}

/** Parses a Responses SSE body into `event:` + `data:` pairs (and fails on a block without data). */
export function parseEvents(raw: string): SseEvent[] {
  return raw
    .split("\n\n")
    .filter((block) => block.trim() && !block.startsWith(":"))
    .map((block) => {
      const lines = block.split("\n");
      const event = lines.find((line) => line.startsWith("event: "))?.slice(7);
      const data = lines
        .filter((line) => line.startsWith("data: "))
        .map((line) => line.slice(6))
        .join("\n");
      expect(data, `SSE block without data: ${block}`).not.toBe("");
      return { event, data: JSON.parse(data) as Record<string, unknown> };
    });
}

/** The per-item event grammar of docs/api.md#streaming, as a sequence of event types after `output_item.added`. */
const GRAMMAR: Record<string, { open: string[]; repeat: string; close: string[] }> = {
  reasoning: {
    open: ["response.reasoning_summary_part.added"],
    repeat: "response.reasoning_summary_text.delta",
    close: ["response.reasoning_summary_text.done", "response.reasoning_summary_part.done"],
  },
  message: { open: ["response.content_part.added"], repeat: "response.output_text.delta", close: ["response.output_text.done", "response.content_part.done"] },
  function_call: { open: [], repeat: "response.function_call_arguments.delta", close: ["response.function_call_arguments.done"] },
};

/**
 * Checks a whole Responses stream against docs/api.md#streaming: `event:` names equal the
 * data's type, `sequence_number` counts up from 0, `response.created` then
 * `response.in_progress` first,
 * every item opens, streams and closes before the next opens, and the final
 * response lists exactly the closed items. Returns the final event's response.
 */
export function checkResponseStream(events: SseEvent[]): Record<string, unknown> {
  events.forEach((entry, index) => {
    expect(entry.event).toBe(entry.data.type);
    expect(entry.data.sequence_number).toBe(index);
  });
  expect(events[0]!.data.type).toBe("response.created");
  expect(events[1]!.data.type).toBe("response.in_progress");
  const last = events[events.length - 1]!.data;
  expect(["response.completed", "response.incomplete", "response.failed"]).toContain(last.type);

  const closed: Record<string, unknown>[] = [];
  let position = 2;
  const body = events.slice(0, -1);
  while (position < body.length) {
    const added = body[position]!.data;
    if (added.type === "error") {
      expect(last.type).toBe("response.failed");
      expect(position).toBe(body.length - 1);
      break;
    }
    expect(added.type).toBe("response.output_item.added");
    expect(added.output_index).toBe(closed.length);
    const item = added.item as Record<string, unknown>;
    const grammar = GRAMMAR[item.type as string];
    expect(grammar, `unexpected item type ${String(item.type)}`).toBeDefined();
    position++;
    for (const type of grammar!.open) expect(body[position++]!.data.type).toBe(type);
    let text = "";
    while (body[position]?.data.type === grammar!.repeat) {
      const delta = body[position]!.data;
      expect(delta.item_id).toBe(item.id);
      expect(delta.output_index).toBe(added.output_index);
      text += delta.delta as string;
      position++;
    }
    if (body[position]?.data.type === "error") continue; // failed mid-item
    for (const type of grammar!.close) {
      const event = body[position++]!.data;
      expect(event.type).toBe(type);
      expect(event.item_id).toBe(item.id);
    }
    const done = body[position++]!.data;
    expect(done.type).toBe("response.output_item.done");
    expect(done.output_index).toBe(added.output_index);
    const finished = done.item as Record<string, unknown>;
    expect(finished.id).toBe(item.id);
    expect(finished.status).toBe("completed");
    if (item.type === "reasoning") expect(finished.summary).toEqual([{ type: "summary_text", text }]);
    if (item.type === "message") expect((finished.content as { text: string }[])[0]!.text).toBe(text);
    if (item.type === "function_call") expect(finished.arguments).toBe(text);
    closed.push(finished);
  }
  const response = last.response as Record<string, unknown>;
  if (last.type !== "response.failed") expect(response.output).toEqual(closed);
  return response;
}

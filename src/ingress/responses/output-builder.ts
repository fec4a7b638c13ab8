import { newId } from "../../turn/sessions/session-id.js";
import type { JsonObject, StreamPart } from "../../providers/contract.js";
import { NamespacedNames } from "./namespaced-names.js";

/** Where the builder's events go: an SSE stream, or nowhere for a non-streaming response. */
export interface OutputSink {
  emit(type: string, fields: JsonObject): void;
  /** Hot path: `head` is the pre-serialised, constant part of the event; only `delta` is stringified. */
  emitDelta(type: string, head: string, delta: string): void;
}

const SILENT_SINK: OutputSink = { emit() {}, emitDelta() {} };

type Entry =
  | { kind: "reasoning"; id: string; index: number; text: string; head: string }
  | { kind: "message"; id: string; index: number; text: string; head: string }
  | { kind: "function"; id: string; index: number; callId: string; name: string; namespace?: string; arguments: string; head: string };
type TextEntry = Extract<Entry, { kind: "reasoning" | "message" }>;

/**
 * Turns canonical stream parts into Responses output items (docs/api.md#streaming): each
 * burst of reasoning, text or one tool call's fragments is one item, and an
 * item is closed (all its `.done` events) before the next one opens. The
 * same fold serves streaming and non-streaming, so both return the same items.
 */
export class OutputBuilder {
  private readonly entries: Entry[] = [];
  private open: Entry | undefined;
  /** Upstream tool-call index → its function_call entry. */
  private readonly calls = new Map<number, Extract<Entry, { kind: "function" }>>();
  finishReason: string | undefined;

  constructor(
    private readonly sink: OutputSink = SILENT_SINK,
    /** How the upstream names the request's namespaced functions: their calls go out with `name` and `namespace` (NamespacedNames). */
    private readonly names: NamespacedNames = NamespacedNames.NONE,
  ) {}

  add(part: StreamPart): void {
    switch (part.type) {
      case "reasoning-delta":
        if (!part.text) return;
        this.appendText(this.open?.kind === "reasoning" ? this.open : this.openReasoning(), "response.reasoning_summary_text.delta", part.text);
        return;
      case "text-delta":
        if (!part.text) return;
        this.appendText(this.open?.kind === "message" ? this.open : this.openMessage(), "response.output_text.delta", part.text);
        return;
      case "tool-call-delta":
        this.addToolFragment(part);
        return;
      case "finish":
        this.finishReason = part.reason;
        return;
      default:
        return;
    }
  }

  /** Closes the last item and returns every item as `response.completed` lists it. */
  finish(): JsonObject[] {
    this.close();
    return this.entries.map((entry) => itemOf(entry, "completed"));
  }

  /** The text of every reasoning item so far: the turn's reasoning up to now. */
  get reasoningSoFar(): string {
    return this.entries.map((entry) => (entry.kind === "reasoning" ? entry.text : "")).join("");
  }

  /** The items so far (for a failed response). */
  get partialItems(): JsonObject[] {
    return this.entries.map((entry) => itemOf(entry, entry === this.open ? "incomplete" : "completed"));
  }

  private appendText(entry: { text: string; head: string }, type: string, text: string): void {
    entry.text += text;
    this.sink.emitDelta(type, entry.head, text);
  }

  private openReasoning(): TextEntry {
    this.close();
    const id = newId("rs_");
    const index = this.entries.length;
    const entry: TextEntry = { kind: "reasoning", id, index, text: "", head: `"item_id":"${id}","output_index":${index},"summary_index":0` };
    this.start(entry);
    this.sink.emit("response.reasoning_summary_part.added", { item_id: id, output_index: index, summary_index: 0, part: { type: "summary_text", text: "" } });
    return entry;
  }

  private openMessage(): TextEntry {
    this.close();
    const id = newId("msg_");
    const index = this.entries.length;
    const entry: TextEntry = { kind: "message", id, index, text: "", head: `"item_id":"${id}","output_index":${index},"content_index":0,"logprobs":[]` };
    this.start(entry);
    this.sink.emit("response.content_part.added", { item_id: id, output_index: index, content_index: 0, part: outputText("") });
    return entry;
  }

  private addToolFragment(part: Extract<StreamPart, { type: "tool-call-delta" }>): void {
    const known = this.calls.get(part.index);
    if (known) {
      if (part.id && !known.callId) known.callId = part.id;
      if (part.name && !known.name) this.nameCall(known, part.name);
      if (!part.arguments) return;
      known.arguments += part.arguments;
      // A fragment of a call that is already closed (interleaved parallel calls) still counts; it just cannot be streamed any more.
      if (known === this.open) this.sink.emitDelta("response.function_call_arguments.delta", known.head, part.arguments);
      return;
    }
    this.close();
    const id = newId("fc_");
    const index = this.entries.length;
    const entry: Extract<Entry, { kind: "function" }> = {
      kind: "function",
      id,
      index,
      callId: part.id ?? newId("call_"),
      name: "",
      arguments: "",
      head: `"item_id":"${id}","output_index":${index}`,
    };
    if (part.name) this.nameCall(entry, part.name);
    this.calls.set(part.index, entry);
    this.start(entry);
    if (part.arguments) {
      entry.arguments = part.arguments;
      this.sink.emitDelta("response.function_call_arguments.delta", entry.head, part.arguments);
    }
  }

  private nameCall(entry: Extract<Entry, { kind: "function" }>, upstreamName: string): void {
    const call = this.names.callOf(upstreamName);
    entry.name = call.name;
    if (call.namespace !== undefined) entry.namespace = call.namespace;
  }

  private start(entry: Entry): void {
    this.entries.push(entry);
    this.open = entry;
    const item = itemOf(entry, "in_progress");
    this.sink.emit("response.output_item.added", { output_index: entry.index, item });
  }

  private close(): void {
    const entry = this.open;
    if (!entry) return;
    this.open = undefined;
    const ids = { item_id: entry.id, output_index: entry.index };
    switch (entry.kind) {
      case "reasoning":
        this.sink.emit("response.reasoning_summary_text.done", { ...ids, summary_index: 0, text: entry.text });
        this.sink.emit("response.reasoning_summary_part.done", { ...ids, summary_index: 0, part: { type: "summary_text", text: entry.text } });
        break;
      case "message":
        this.sink.emit("response.output_text.done", { ...ids, content_index: 0, text: entry.text, logprobs: [] });
        this.sink.emit("response.content_part.done", { ...ids, content_index: 0, part: outputText(entry.text) });
        break;
      case "function":
        this.sink.emit("response.function_call_arguments.done", { ...ids, name: entry.name, arguments: entry.arguments });
        break;
    }
    this.sink.emit("response.output_item.done", { output_index: entry.index, item: itemOf(entry, "completed") });
  }
}

function outputText(text: string): JsonObject {
  return { type: "output_text", text, annotations: [], logprobs: [] };
}

/** An output item as OpenAI spells it; items being opened are empty, as OpenAI sends them. */
function itemOf(entry: Entry, status: "in_progress" | "completed" | "incomplete"): JsonObject {
  const opening = status === "in_progress";
  switch (entry.kind) {
    case "reasoning":
      return { id: entry.id, type: "reasoning", status, summary: opening ? [] : [{ type: "summary_text", text: entry.text }] };
    case "message":
      return { id: entry.id, type: "message", status, role: "assistant", content: opening ? [] : [outputText(entry.text)] };
    case "function": {
      const item: JsonObject = {
        id: entry.id,
        type: "function_call",
        status,
        call_id: entry.callId,
        name: entry.name,
        arguments: opening ? "" : entry.arguments,
      };
      if (entry.namespace !== undefined) item.namespace = entry.namespace;
      return item;
    }
  }
}

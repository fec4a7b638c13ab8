import type { SseWriter } from "../sse.js";
import type { JsonObject } from "../../providers/contract.js";
import type { OutputSink } from "./output-builder.js";

/**
 * Responses streaming events as OpenAI sends them: `event: <type>` plus a
 * `data:` line, every event numbered by a strictly increasing
 * `sequence_number` from 0. Event types are our own constants, so nothing a
 * client or upstream sends reaches the framing.
 */
export class ResponseEventWriter implements OutputSink {
  private sequence = 0;

  constructor(private readonly sse: SseWriter) {}

  emit(type: string, fields: JsonObject): void {
    this.sse.data(JSON.stringify({ type, sequence_number: this.sequence++, ...fields }), type);
  }

  emitDelta(type: string, head: string, delta: string): void {
    this.sse.data(`{"type":"${type}","sequence_number":${this.sequence++},${head},"delta":${JSON.stringify(delta)}}`, type);
  }

  holdUntilEnd(): void {
    this.sse.holdUntilEnd();
  }

  end(): void {
    this.sse.end();
  }
}

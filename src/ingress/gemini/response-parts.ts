import type { JsonObject, StreamPart } from "../../providers/contract.js";
import { parseToolArguments } from "../../providers/tool-arguments.js";

/** A function call as it is gathered: its fragments' arguments joined. */
interface GatheredCall {
  id: string;
  name: string;
  args: string;
}

/**
 * Canonical stream parts as Gemini response parts. Thoughts (when the
 * client asked to see them) and text go out as they arrive, consecutive
 * deltas of one kind as one part; function calls are gathered whole, as
 * Gemini sends them, and go out last, the first one carrying the turn's
 * thoughtSignature (carrierd's envelope of its carriers), as Gemini signs
 * the first call of a turn.
 */
export class ResponseParts {
  /** The thought and text parts not taken yet, in order: a whole answer's every one, a stream's since its last chunk. */
  readonly shown: JsonObject[] = [];
  private readonly calls = new Map<number, GatheredCall>();

  constructor(private readonly includeThoughts: boolean) {}

  add(part: StreamPart): void {
    switch (part.type) {
      case "reasoning-delta":
        if (this.includeThoughts && part.text) this.text(part.text, true);
        return;
      case "text-delta":
        if (part.text) this.text(part.text, false);
        return;
      case "tool-call-delta": {
        let call = this.calls.get(part.index);
        if (!call) this.calls.set(part.index, (call = { id: part.id ?? "", name: part.name ?? "", args: "" }));
        else {
          if (part.id && !call.id) call.id = part.id;
          if (part.name && !call.name) call.name = part.name;
        }
        if (part.arguments) call.args += part.arguments;
        return;
      }
      default:
        return;
    }
  }

  /** The thought and text parts that arrived since the last call, let go of here: what a stream sends now. */
  takeFresh(): JsonObject[] {
    return this.shown.splice(0);
  }

  get hasCalls(): boolean {
    return this.calls.size > 0;
  }

  /**
   * The turn's last parts: its function calls, the first with `signature`.
   * A turn that ends in text gets none: the upstreams that need a turn's
   * reasoning back need it for its tool calls, and a text turn's comes from
   * the store; sealing it would cost every answer an envelope.
   */
  closing(signature: string | undefined): JsonObject[] {
    const parts: JsonObject[] = [];
    for (const call of this.calls.values()) {
      const functionCall: JsonObject = { name: call.name, args: parseToolArguments(call.args) };
      if (call.id) functionCall.id = call.id;
      const part: JsonObject = { functionCall };
      if (signature && parts.length === 0) part.thoughtSignature = signature;
      parts.push(part);
    }
    return parts;
  }

  private text(text: string, thought: boolean): void {
    const last = this.shown.at(-1);
    if (last && (last.thought === true) === thought) {
      last.text = (last.text as string) + text;
      return;
    }
    this.shown.push(thought ? { text, thought: true } : { text });
  }
}

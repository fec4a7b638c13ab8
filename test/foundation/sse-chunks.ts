/** A `chat.completion.chunk` as a client reads it. */
export interface Chunk {
  id: string;
  object: string;
  model: string;
  choices: {
    index: number;
    delta: {
      role?: string;
      content?: string | null;
      reasoning_content?: string;
      tool_calls?: { index: number; id?: string; type?: string; function?: { name?: string; arguments?: string } }[];
    };
    finish_reason: string | null;
  }[];
  usage?: Record<string, unknown>;
}

export interface StreamSummary {
  reasoning: string;
  content: string;
  toolCalls: { id: string; type: string; function: { name: string; arguments: string } }[];
  finishReason: string | null;
  /** Chunk positions, to check that reasoning precedes the answer. */
  lastReasoningIndex: number;
  firstContentIndex: number;
}

/** Folds chunks the way an OpenAI SDK client does: strings concatenate, tool calls merge by index. */
export function chunkDeltas(chunks: Chunk[]): StreamSummary {
  const summary: StreamSummary = { reasoning: "", content: "", toolCalls: [], finishReason: null, lastReasoningIndex: -1, firstContentIndex: -1 };
  chunks.forEach((chunk, position) => {
    const choice = chunk.choices[0];
    if (!choice) return;
    const { delta } = choice;
    if (delta.reasoning_content) {
      summary.reasoning += delta.reasoning_content;
      summary.lastReasoningIndex = position;
    }
    if (delta.content) {
      summary.content += delta.content;
      if (summary.firstContentIndex < 0) summary.firstContentIndex = position;
    }
    for (const call of delta.tool_calls ?? []) {
      const merged = (summary.toolCalls[call.index] ??= { id: "", type: "", function: { name: "", arguments: "" } });
      if (call.id) merged.id = call.id;
      if (call.type) merged.type = call.type;
      if (call.function?.name) merged.function.name += call.function.name;
      if (call.function?.arguments) merged.function.arguments += call.function.arguments;
    }
    if (choice.finish_reason) summary.finishReason = choice.finish_reason;
  });
  return summary;
}

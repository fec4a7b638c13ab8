import type { ChatService } from "../chat-service.js";
import type { ChatMessage } from "../../providers/contract.js";
import type { SessionStorage } from "../../storage/storage.js";
import { Cancellation } from "../../providers/upstream/cancellation.js";
import { SUMMARY_INDEX, type ViewEntry } from "./view.js";
import { shown } from "../../foundation/util/shown.js";

const INSTRUCTIONS = [
  "You compact a long conversation between a user and an assistant so that it fits the assistant's context window.",
  "Summarise the excerpt the user sends: the user's goals and constraints, decisions made, facts and tool results learned, files or values mentioned, open questions, and what was about to happen next.",
  "Write compact notes for the assistant who continues the conversation. Keep names, numbers and identifiers exact. Do not invent anything.",
].join(" ");

/** Longest transcript sent to the summariser, in characters; the middle of a longer one is left out. */
const MAX_TRANSCRIPT_CHARS = 400_000;

/**
 * The summarised messages as plain text. Reasoning and opaque carriers stay
 * out: the summary is of what was said and done, and the turns that held
 * them stay archived in the store.
 */
export function transcriptOf(entries: readonly ViewEntry[]): string {
  const lines = entries.map(({ message, index }) => {
    const text = textOf(message);
    if (index === SUMMARY_INDEX) return `Earlier summary:\n${text}`;
    switch (message.role) {
      case "assistant": {
        const calls = (message.tool_calls ?? []).map((call) => `[called ${call.function.name}(${call.function.arguments}) id=${call.id}]`);
        return `Assistant: ${[text, ...calls].filter(Boolean).join("\n")}`;
      }
      case "tool":
        return `Tool result (${message.tool_call_id ?? "?"}): ${text}`;
      case "user":
        return `User: ${text}`;
      default:
        return `System: ${text}`;
    }
  });
  const transcript = lines.join("\n\n");
  if (transcript.length <= MAX_TRANSCRIPT_CHARS) return transcript;
  const keep = MAX_TRANSCRIPT_CHARS / 2;
  return `${transcript.slice(0, keep)}\n\n[… ${transcript.length - 2 * keep} characters left out …]\n\n${transcript.slice(-keep)}`;
}

/**
 * Asks the summariser route for a summary, non-streaming, through the same
 * chat path as every request (routes, plugins, verdicts). The request has
 * no assistant messages, so it matches no session and opens a scratch one;
 * that session is removed once the summary is in hand — the checkpoint
 * keeps the summary, and `sessions list` keeps showing conversations only.
 */
export async function summarize(
  chat: ChatService,
  sessions: Pick<SessionStorage, "remove">,
  options: { keyHash: string; model: string; transcript: string; maxTokens: number; signal: AbortSignal },
): Promise<string> {
  const run = await chat.start(
    {
      model: options.model,
      messages: [
        { role: "system", content: INSTRUCTIONS },
        { role: "user", content: options.transcript },
      ],
      stream: false,
      max_tokens: options.maxTokens,
      // a summary needs no visible reasoning; upstreams that can skip it save the tokens
      model_options: { reasoning: { enabled: false } },
    },
    { keyHash: options.keyHash, explicitSession: undefined, sessionScope: undefined, stream: false, cancellation: Cancellation.of(options.signal) },
  );
  let text = "";
  try {
    for await (const batch of run.batches) for (const part of batch) if (part.type === "text-delta") text += part.text;
    await run.complete();
  } catch (error) {
    run.fail(error);
    throw error;
  } finally {
    await sessions.remove(run.sessionId);
  }
  if (!text.trim()) throw new Error("the summariser answered with no text");
  return text.trim();
}

function textOf(message: ChatMessage): string {
  if (typeof message.content === "string") return message.content;
  if (Array.isArray(message.content)) return message.content.map((part) => (typeof part.text === "string" ? part.text : `[${shown(part.type)}]`)).join("\n");
  return "";
}

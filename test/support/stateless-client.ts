import { readSse, type TestGateway } from "./gateway.js";

export type Message = Record<string, unknown> & { role: string };

export interface ClientTurn {
  status: number;
  sessionId: string | null;
  /** The assistant message as a stateless frontend keeps it: text and tool calls, no reasoning. */
  kept: Message;
  reasoning: string;
  /** Where the answer's reasoning came: the upstream's own field on a carried route (`reasoning_content`, `reasoning`, Mistral's `thinking` chunks). */
  reasoningField?: string;
  error?: { message: string; type: string; code: string | null };
}

/**
 * One chat-completions call the way Open WebUI / LibreChat make them: the
 * whole history resent, reasoning dropped from what it keeps of the answer.
 * The answer is read as such a client reads its upstream's: on a carried
 * route it is the upstream's own (docs/api.md#carried-chat-completions), so
 * reasoning is read from whichever field it came in, and text from a
 * content string or its text parts.
 */
export async function ask(gateway: TestGateway, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<ClientTurn> {
  const response = await gateway.post("/v1/chat/completions", body, headers);
  const sessionId = response.headers.get("x-session-id");
  if (response.status !== 200) {
    // a carried refusal is the upstream's body as sent: Google's OpenAI endpoint wraps its error object in an array
    const refusal = (await response.json()) as { error: ClientTurn["error"] } | [{ error: ClientTurn["error"] }];
    const error = Array.isArray(refusal) ? refusal[0].error : refusal.error;
    return { status: response.status, sessionId, kept: { role: "assistant" }, reasoning: "", error };
  }
  if (body.stream) {
    const { events } = await readSse(response);
    const read: Read = { text: "", reasoning: "" };
    const calls: { id: string; type: string; function: { name: string; arguments: string } }[] = [];
    for (const event of events as { choices?: { delta?: Record<string, unknown> }[]; error?: ClientTurn["error"] }[]) {
      if (event.error) return { status: 502, sessionId, kept: { role: "assistant" }, reasoning: read.reasoning, error: event.error };
      const delta = event.choices?.[0]?.delta ?? {};
      readMessage(delta, read);
      for (const call of (delta.tool_calls as { index: number; id?: string; function?: { name?: string; arguments?: string } }[] | undefined) ?? []) {
        const entry = (calls[call.index] ??= { id: "", type: "function", function: { name: "", arguments: "" } });
        if (call.id) entry.id = call.id;
        if (call.function?.name) entry.function.name = call.function.name;
        if (call.function?.arguments) entry.function.arguments += call.function.arguments;
      }
    }
    return { status: 200, sessionId, kept: keep(read.text || null, calls), reasoning: read.reasoning, reasoningField: read.field };
  }
  const json = (await response.json()) as { choices: { message: Record<string, unknown> & { tool_calls?: unknown[] } }[] };
  const message = json.choices[0]!.message;
  const read: Read = { text: "", reasoning: "" };
  readMessage(message, read);
  const content = typeof message.content === "string" || message.content === null ? message.content : read.text;
  return { status: 200, sessionId, kept: keep(content, message.tool_calls ?? []), reasoning: read.reasoning, reasoningField: read.field };
}

interface Read {
  text: string;
  reasoning: string;
  field?: string;
}

/** A message's or delta's text and reasoning, as a client of its upstream reads them. */
function readMessage(message: Record<string, unknown>, read: Read): void {
  for (const field of ["reasoning_content", "reasoning"]) {
    const value = message[field];
    if (typeof value !== "string" || value === "") continue;
    read.reasoning += value;
    read.field ??= field;
    break;
  }
  if (typeof message.content === "string") read.text += message.content;
  else if (Array.isArray(message.content))
    for (const part of message.content as { type?: string; text?: string; thinking?: { text?: string }[] }[]) {
      if (part.type === "text" && typeof part.text === "string") read.text += part.text;
      if (part.type === "thinking" && Array.isArray(part.thinking)) {
        read.reasoning += part.thinking.map((inner) => inner.text ?? "").join("");
        read.field ??= "thinking";
      }
    }
}

function keep(content: string | null, calls: unknown[]): Message {
  const message: Message = { role: "assistant", content };
  if (calls.length > 0) message.tool_calls = calls;
  return message;
}

/** The assistant messages of an upstream request body. */
export function assistantsOf(body: { messages: Record<string, unknown>[] }): Record<string, unknown>[] {
  return body.messages.filter((message) => message.role === "assistant");
}

export const CARRIER_KEYS = ["reasoning_content", "reasoning", "reasoning_details", "native_record"];

/** Which carrier keys a wire message holds. */
export function carriersOf(message: Record<string, unknown>): string[] {
  return CARRIER_KEYS.filter((key) => key in message);
}

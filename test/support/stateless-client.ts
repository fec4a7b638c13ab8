import { readSse, type TestGateway } from "./gateway.js";

export type Message = Record<string, unknown> & { role: string };

export interface ClientTurn {
  status: number;
  sessionId: string | null;
  /** The assistant message as a stateless frontend keeps it: text and tool calls, no reasoning. */
  kept: Message;
  reasoning: string;
  error?: { message: string; type: string; code: string | null };
}

/**
 * One chat-completions call the way Open WebUI / LibreChat make them: the
 * whole history resent, reasoning dropped from what it keeps of the answer.
 */
export async function ask(gateway: TestGateway, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<ClientTurn> {
  const response = await gateway.post("/v1/chat/completions", body, headers);
  const sessionId = response.headers.get("x-session-id");
  if (response.status !== 200) {
    const error = ((await response.json()) as { error: ClientTurn["error"] }).error;
    return { status: response.status, sessionId, kept: { role: "assistant" }, reasoning: "", error };
  }
  if (body.stream) {
    const { events } = await readSse(response);
    let content = "";
    let reasoning = "";
    const calls: { id: string; type: string; function: { name: string; arguments: string } }[] = [];
    for (const event of events as { choices?: { delta?: Record<string, unknown> }[]; error?: ClientTurn["error"] }[]) {
      if (event.error) return { status: 502, sessionId, kept: { role: "assistant" }, reasoning, error: event.error };
      const delta = event.choices?.[0]?.delta ?? {};
      if (typeof delta.content === "string") content += delta.content;
      if (typeof delta.reasoning_content === "string") reasoning += delta.reasoning_content;
      for (const call of (delta.tool_calls as { index: number; id?: string; function?: { name?: string; arguments?: string } }[] | undefined) ?? []) {
        const entry = (calls[call.index] ??= { id: "", type: "function", function: { name: "", arguments: "" } });
        if (call.id) entry.id = call.id;
        if (call.function?.name) entry.function.name = call.function.name;
        if (call.function?.arguments) entry.function.arguments += call.function.arguments;
      }
    }
    return { status: 200, sessionId, kept: keep(content || null, calls), reasoning };
  }
  const json = (await response.json()) as {
    choices: { message: { content: string | null; reasoning_content?: string; tool_calls?: ClientTurn["kept"]["tool_calls"] } }[];
  };
  const message = json.choices[0]!.message;
  return { status: 200, sessionId, kept: keep(message.content, (message.tool_calls as never) ?? []), reasoning: message.reasoning_content ?? "" };
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

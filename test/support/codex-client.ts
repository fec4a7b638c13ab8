import { readFixture } from "./fixtures-dir.js";
import { readSse, type TestGateway } from "./gateway.js";

export type Item = Record<string, unknown> & { type?: string };

/** The request Codex 0.171.0 sends on a resumed turn (test/fixtures/clients), as the model for every request here. */
const CAPTURED = JSON.parse(readFixture("clients/codex-0.171.0-resume-turn-req.json")) as { body: Record<string, unknown> & { input: Item[] } };

/** Codex's opening items: its two developer messages and the environment context, as it sends them. */
export const CODEX_PREAMBLE: Item[] = CAPTURED.body.input.slice(0, 3);

/** How a client resends a turn's reasoning items. */
export type Resend = "as codex" | "without summary";

export interface CodexTurn {
  readonly status: number;
  /** The output items in the order `response.output_item.done` delivered them (non-streaming: `output`). */
  readonly done: Item[];
  /** `output` of the final response (`response.completed` when streamed). */
  readonly output: Item[];
  readonly error?: unknown;
  readonly sessionId: string | null;
}

/**
 * One request the way Codex makes it: `store: false`, `include:
 * ["reasoning.encrypted_content"]`, its captured tools, settings and
 * headers, the history it keeps itself as `input`.
 */
export async function codexTurn(gateway: TestGateway, model: string, input: Item[], stream: boolean, headers: Record<string, string> = {}): Promise<CodexTurn> {
  const { input: _captured, ...settings } = CAPTURED.body;
  const response = await gateway.post("/v1/responses", { ...settings, model, stream, input }, headers);
  const sessionId = response.headers.get("x-session-id");
  if (response.status !== 200) return { status: response.status, done: [], output: [], error: await response.json(), sessionId };
  if (!stream) {
    const body = (await response.json()) as { output: Item[] };
    return { status: 200, done: body.output, output: body.output, sessionId };
  }
  const { events } = await readSse(response);
  const done: Item[] = [];
  let output: Item[] = [];
  for (const event of events as { type: string; item?: Item; response?: { output: Item[] } }[]) {
    if (event.type === "response.output_item.done" && event.item) done.push(event.item);
    if (event.type === "response.completed" || event.type === "response.failed") output = event.response?.output ?? [];
  }
  return { status: 200, done, output, sessionId };
}

/** A turn's items as Codex keeps them for its next request: reasoning resent with `content: null`, with or without its summary. */
export function kept(items: Item[], resend: Resend): Item[] {
  return items.map((item) => {
    if (item.type !== "reasoning") return item;
    return {
      type: "reasoning",
      id: item.id,
      summary: resend === "as codex" ? item.summary : [],
      content: null,
      encrypted_content: item.encrypted_content ?? null,
    };
  });
}

/** What Codex sends back for each function call of a turn: its tool's output. */
export function toolOutputs(items: Item[]): Item[] {
  return items
    .filter((item) => item.type === "function_call")
    .map((item) => ({ type: "function_call_output", call_id: item.call_id, output: "Process exited with code 0\nOutput:\n20 C in Florence\n" }));
}

export function userMessage(text: string): Item {
  return { type: "message", role: "user", content: [{ type: "input_text", text }] };
}

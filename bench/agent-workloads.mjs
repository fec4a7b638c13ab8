// Agent-sized request bodies for the bench (issue 37), built from real
// clients' requests in test/fixtures/clients/ (see the README there: captured
// from Codex CLI 0.171.0, opencode 1.18.33 and Claude Code 2.1.328, licences
// of those programs). Each body keeps the captured system prompt, tool
// schemas and top-level fields as they were sent; its history repeats the
// captured turn pattern `turns` times — an assistant turn with its reasoning
// (as that client resends it) and one tool call, then the tool's output —
// with tool outputs of several KB. Everything is deterministic: the same
// workload and size give the same bytes on every run.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { BLOB } from "./responses-upstream.mjs";

const capture = (name) => JSON.parse(readFileSync(fileURLToPath(new URL(`../test/fixtures/clients/${name}`, import.meta.url)), "utf8")).body;

/** A tool output of about 3–5.5 KB: a source listing whose lines depend on the turn alone. */
export function toolOutput(turn) {
  const lines = [];
  const count = 25 + ((turn * 37) % 25);
  for (let line = 0; line < count; line++) {
    const n = (turn * 7919 + line * 104729) % 9973;
    lines.push(
      `${String(line + 1).padStart(4)}  export function step${n}(input: Record<string, unknown>): number { return Object.keys(input).length * ${n % 97}; }`,
    );
  }
  return `src/module-${turn}.ts\n${lines.join("\n")}\n`;
}

/** What the model thought before its call at `turn`: the reasoning each assistant turn carries (or has attached). */
export function reasoningOf(turn) {
  return `Step 1: read module ${turn} to see how its steps are counted.\nStep 2: a tool named "read" is offered; calling it is the best way to answer.\nStep 3: prepare the arguments for the call, then compare with module ${turn - 1}.`;
}

const callId = (turn) => `call_bench_${String(turn).padStart(4, "0")}`;
const command = (turn) => `cat src/module-${turn}.ts`;

/**
 * The three workloads: each names its ingress path, builds a body with
 * `turns` assistant turns of history, and says where a body's assistant
 * turns are (for the parse floor's "attach each assistant turn's reasoning").
 */
export const WORKLOADS = {
  // Codex CLI: the Responses API, developer messages, reasoning items resent with encrypted_content null
  codex: {
    path: "/v1/responses",
    wire: "responses",
    body(turns, { model, stream }) {
      const captured = capture("codex-0.171.0-resume-turn-req.json");
      const input = captured.input.slice(0, 4);
      for (let turn = 0; turn < turns; turn++) {
        input.push(
          { type: "reasoning", id: `rs_bench_${turn}`, summary: [{ type: "summary_text", text: reasoningOf(turn) }], content: null, encrypted_content: null },
          {
            type: "function_call",
            status: "completed",
            id: `fc_bench_${turn}`,
            name: "exec_command",
            arguments: JSON.stringify({ cmd: command(turn) }),
            call_id: callId(turn),
          },
          { type: "function_call_output", id: `fco_bench_${turn}`, call_id: callId(turn), output: toolOutput(turn) },
        );
      }
      return { ...captured, model, stream, input };
    },
    assistantTurns: (body) => body.input.filter((item) => item.type === "function_call"),
  },
  // Codex on a same-wire route: the same request to an openai-responses route (carried), each reasoning item with
  // the upstream's own blob, as Codex keeps it from an OpenAI answer
  "codex-same-wire": {
    path: "/v1/responses",
    upstreamPath: "/v1/responses",
    models: { bench: "bench-responses", "bench-paced": "bench-responses-paced" },
    body(turns, options) {
      const body = WORKLOADS.codex.body(turns, options);
      return { ...body, input: body.input.map((item) => (item.type === "reasoning" ? { ...item, encrypted_content: BLOB } : item)) };
    },
    assistantTurns: (body) => body.input.filter((item) => item.type === "function_call"),
  },
  // opencode: chat completions, reasoning_content and content "" on tool-call turns
  opencode: {
    path: "/v1/chat/completions",
    wire: "chat",
    body(turns, { model, stream }) {
      const captured = capture("opencode-1.18.33-turn2-toolresult-req.json");
      const messages = captured.messages.slice(0, 2);
      for (let turn = 0; turn < turns; turn++) {
        messages.push(
          {
            role: "assistant",
            content: "",
            reasoning_content: reasoningOf(turn),
            tool_calls: [{ id: callId(turn), type: "function", function: { name: "bash", arguments: JSON.stringify({ command: command(turn) }) } }],
          },
          { role: "tool", tool_call_id: callId(turn), content: toolOutput(turn) },
        );
      }
      return { ...captured, model, stream, messages };
    },
    assistantTurns: (body) => body.messages.filter((message) => message.role === "assistant"),
  },
  // Claude Code: the Messages API, thinking blocks resent with their signature, tool_result blocks
  "claude-code": {
    path: "/v1/messages",
    wire: "messages",
    body(turns, { model, stream }) {
      const captured = capture("claude-code-2.1.328-toolresult-req.json");
      const messages = captured.messages.slice(0, 1);
      for (let turn = 0; turn < turns; turn++) {
        const id = `toolu_bench_${String(turn).padStart(4, "0")}`;
        messages.push(
          {
            role: "assistant",
            content: [
              { type: "thinking", thinking: reasoningOf(turn), signature: Buffer.from(`bench-signature-${turn}`).toString("base64") },
              { type: "tool_use", id, name: "Bash", input: { command: command(turn), description: `Read module ${turn}` } },
            ],
          },
          { role: "user", content: [{ tool_use_id: id, type: "tool_result", content: toolOutput(turn), is_error: false }] },
        );
      }
      return { ...captured, model, stream, messages };
    },
    assistantTurns: (body) => body.messages.filter((message) => message.role === "assistant"),
  },
};

import type { ZodType } from "zod";

/**
 * What real chat frontends do to an assistant turn between receiving it and
 * sending it back, one emulation per frontend, each written from that
 * frontend's source (file and function named on each). A frontend keeps what
 * it read off the stream (an `Answer`), runs the tools itself, and builds the
 * next request's history from what it kept: within the UI turn still running
 * (its tool loop) and, once a new user message is asked, from the stored UI
 * turn. Those are two code paths in some frontends, so both are emulated.
 *
 * Sources: https://github.com/open-webui/open-webui, https://github.com/danny-avila/agents
 * (LibreChat's LLM layer), https://github.com/lobehub/lobe-chat, https://github.com/vercel/ai,
 * https://github.com/sst/opencode.
 */

export type Message = Record<string, unknown> & { role: string };

/** One upstream answer as a frontend read it: text, reasoning, tool calls (arguments as streamed). */
export interface Answer {
  readonly text: string;
  readonly reasoning: string;
  readonly toolCalls: readonly { id: string; name: string; arguments: string }[];
}

/** One upstream answer and the results of the tools it called, in call order. */
export interface Round {
  readonly answer: Answer;
  readonly results: readonly { id: string; name: string; content: string }[];
}

/** What the frontend knows of the request beyond the turn: its model id, and its tools' schemas. */
export interface FrontendContext {
  /** The model id the frontend is configured with: some frontends key behaviour on it. */
  readonly model: string;
  /** Tool input schemas by tool name: the AI SDK reshapes arguments through them. */
  readonly schemas: Readonly<Record<string, ZodType>>;
}

export interface Frontend {
  readonly name: string;
  /** The tool names it offers the model for a tool the app calls `apiName`. */
  toolName(apiName: string): string;
  /** A round of the UI turn still running, resent for the next step of its tool loop. */
  inTurn(round: Round, context: FrontendContext): Message[];
  /** A finished UI turn (every round of it), resent with a later user message. */
  history(rounds: readonly Round[], context: FrontendContext): Message[];
}

const sameName = (apiName: string) => apiName;

function toolMessages(round: Round, withName: boolean): Message[] {
  return round.results.map((result) => ({ role: "tool", tool_call_id: result.id, ...(withName ? { name: result.name } : {}), content: result.content }));
}

// ---------------------------------------------------------------------------
// Open WebUI. The backend keeps a turn as content blocks; serialize_content_blocks
// (backend/open_webui/utils/middleware.py) turns them into the stored message text.

/** Python's `json.dumps` with its default separators (`", "`, `": "`) and `ensure_ascii`. */
export function pythonJsonDumps(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return `[${value.map(pythonJsonDumps).join(", ")}]`;
  if (typeof value === "object") {
    return `{${Object.entries(value as Record<string, unknown>)
      .map(([key, item]) => `${pythonJsonDumps(key)}: ${pythonJsonDumps(item)}`)
      .join(", ")}}`;
  }
  if (typeof value === "string") return JSON.stringify(value).replace(/[\u007f-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
  return JSON.stringify(value);
}

/** Open WebUI's argument rewrite: `json.dumps(ast.literal_eval(args))`, falling back to `json.loads`; empty or unparsable is `{}`. */
function openWebUiArguments(text: string): string {
  try {
    return text.trim() ? pythonJsonDumps(JSON.parse(text)) : "{}";
  } catch {
    return "{}";
  }
}

/** Python's `html.escape(s, quote=True)`. */
function htmlEscape(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#x27;");
}

/** Python's `str.strip()` (whitespace as Python counts it). */
function pythonStrip(text: string): string {
  return text.replace(/^[\s\x1c-\x1f\x85]+|[\s\x1c-\x1f\x85]+$/g, "");
}

/**
 * `serialize_content_blocks(blocks, raw)` over the blocks of `rounds`: each
 * round is its reasoning block, its text block, then its tool_calls block.
 * Raw mode (the in-turn tool loop) writes reasoning as `<think>…</think>`;
 * stored mode as a `<details type="reasoning">` rendering. The whole is `.strip()`ped.
 */
function serializeContentBlocks(rounds: readonly Round[], raw: boolean, withToolCalls: boolean): string {
  let content = "";
  for (const { answer, results } of rounds) {
    if (answer.reasoning) {
      const display = answer.reasoning
        .split("\n")
        .map((line) => (line.startsWith(">") ? line : `> ${line}`))
        .join("\n");
      content += raw
        ? `<think>${answer.reasoning}</think>\n`
        : `<details type="reasoning" done="true" duration="1">\n<summary>Thought for 1 seconds</summary>\n${display}\n</details>\n`;
    }
    const text = pythonStrip(answer.text);
    if (text) content += `${text}\n`;
    if (!withToolCalls) continue;
    for (const call of answer.toolCalls) {
      const result = results.find((entry) => entry.id === call.id)?.content ?? "";
      content += `<details type="tool_calls" done="true" id="${call.id}" name="${call.name}" arguments="${htmlEscape(openWebUiArguments(call.arguments))}" result="${htmlEscape(pythonJsonDumps(result))}" files="">\n<summary>Tool Executed</summary>\n</details>\n`;
    }
  }
  return pythonStrip(content);
}

/**
 * `processDetails` (src/lib/utils/index.ts): reasoning and code-interpreter
 * `<details>` removed by `removeDetails` (the newline after each is left),
 * each tool_calls `<details>` replaced by `"${attributes.result}"`.
 */
function processDetails(content: string): string {
  let out = content.replace(/<details\s+type="(?:reasoning|code_interpreter)"[^>]*>.*?<\/details>/gis, "");
  for (const match of out.match(/<details\s+type="tool_calls"([^>]*)>([\s\S]*?)<\/details>/gis) ?? []) {
    const attributes: Record<string, string> = {};
    for (const [, key, value] of match.matchAll(/(\w+)="([^"]*)"/g)) attributes[key!] = value!;
    out = out.replace(match, `"${attributes.result}"`);
  }
  return out;
}

/** The in-turn tool loop of Open WebUI ≤0.6 (`convert_content_blocks_to_messages(blocks, raw=True)`), with the calls as accumulated from the deltas. */
function openWebUiInTurn(round: Round): Message[] {
  const message: Message = { role: "assistant", content: serializeContentBlocks([round], true, false) };
  if (round.answer.toolCalls.length > 0) {
    message.tool_calls = round.answer.toolCalls.map((call, index) => ({
      index,
      id: call.id,
      type: "function",
      function: { name: call.name, arguments: openWebUiArguments(call.arguments) },
    }));
  }
  return [message, ...toolMessages(round, false)];
}

/** Open WebUI ≤0.6: on the next request (Chat.svelte, `content: processDetails(message.content)`) the whole UI turn is one text message. */
export const openWebUi06: Frontend = {
  name: "Open WebUI 0.6",
  toolName: sameName,
  inTurn: (round) => openWebUiInTurn(round),
  history(rounds) {
    const content = processDetails(serializeContentBlocks(rounds, false, true));
    return content.trim() ? [{ role: "assistant", content }] : [];
  },
};

/**
 * Open WebUI 0.7+ (`output` items): `convert_output_to_messages` rebuilds one
 * assistant message per upstream response, text `.strip()`ped, real
 * `tool_calls` (arguments in the json.dumps form) and `role: "tool"`
 * messages; reasoning is skipped. In the running turn (`raw=True`) the
 * reasoning is prefixed as `<think>…</think>`, joined to the text with "\n".
 */
export const openWebUi07: Frontend = {
  name: "Open WebUI 0.7+",
  toolName: sameName,
  inTurn(round) {
    const text = pythonStrip(round.answer.text);
    const content = [round.answer.reasoning ? `<think>${round.answer.reasoning}</think>` : "", text].filter(Boolean).join("\n");
    return [openWebUi07Message(round, content), ...toolMessages(round, false)];
  },
  history: (rounds) => rounds.flatMap((round) => [openWebUi07Message(round, pythonStrip(round.answer.text)), ...toolMessages(round, false)]),
};

function openWebUi07Message(round: Round, content: string): Message {
  const message: Message = { role: "assistant", content };
  if (round.answer.toolCalls.length > 0) {
    message.tool_calls = round.answer.toolCalls.map((call) => ({
      id: call.id,
      type: "function",
      function: { name: call.name, arguments: openWebUiArguments(call.arguments) },
    }));
  }
  return message;
}

// ---------------------------------------------------------------------------
// LibreChat: danny-avila/agents `formatAssistantMessage` and `_convertMessagesToOpenAIParams`.

/** `serializeToolCallInput(JSON.parse(args))`: compact JSON; unparsable arguments become `{"input": raw}`. */
function libreChatArguments(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text));
  } catch {
    return JSON.stringify({ input: text });
  }
}

/**
 * LibreChat. A tool-call message is sent with `content: ""` (the text before
 * the call is lost); later text, when the UI turn had reasoning, is joined
 * with "\n" and trimmed into a string, else sent as a text-parts array.
 * Tool messages carry `name`. Reasoning is dropped, except through the
 * DeepSeek and Moonshot providers (`preserveReasoningContent`), which send
 * `reasoning_content` on tool-call messages.
 */
function libreChat(name: string, keepsReasoning: boolean): Frontend {
  const messages = (rounds: readonly Round[]): Message[] => {
    const hadReasoning = rounds.some((round) => round.answer.reasoning);
    return rounds.flatMap((round) => {
      const { answer } = round;
      if (answer.toolCalls.length > 0) {
        const message: Message = {
          role: "assistant",
          content: "",
          tool_calls: answer.toolCalls.map((call) => ({
            id: call.id,
            type: "function",
            function: { name: call.name, arguments: libreChatArguments(call.arguments) },
          })),
        };
        if (keepsReasoning && answer.reasoning) message.reasoning_content = answer.reasoning;
        return [message, ...toolMessages(round, true)];
      }
      return [{ role: "assistant", content: hadReasoning ? answer.text.trim() : [{ type: "text", text: answer.text }] }];
    });
  };
  return { name, toolName: sameName, inTurn: (round) => messages([round]), history: messages };
}

export const libreChatCustom = libreChat("LibreChat", false);
export const libreChatDeepSeek = libreChat("LibreChat (DeepSeek provider)", true);

// ---------------------------------------------------------------------------
// LobeChat: `convertOpenAIMessages` / `processAssistantMessage`.

/** LobeChat names a plugin's API `identifier____apiName` (`genToolCallingName`, type "default"); a call's name is parsed back and rebuilt the same way. */
const LOBE_SEPARATOR = "____";
const LOBE_IDENTIFIER = "lobe-weather";

/**
 * LobeChat. Content verbatim (no trim), tool calls with their streamed
 * arguments and the name rebuilt from identifier and API name, tool messages
 * with `name`. Reasoning is excluded, and re-derived as `reasoning_content`
 * only when the model id contains `deepseek`, `glm` or `kimi`.
 */
export const lobeChat: Frontend = {
  name: "LobeChat",
  toolName: (apiName) => `${LOBE_IDENTIFIER}${LOBE_SEPARATOR}${apiName}`,
  inTurn: (round, context) => lobeChatMessages([round], context),
  history: (rounds, context) => lobeChatMessages(rounds, context),
};

function lobeChatMessages(rounds: readonly Round[], context: FrontendContext): Message[] {
  const reasoningModel = /deepseek|glm|kimi/i.test(context.model);
  return rounds.flatMap((round) => {
    const { answer } = round;
    const message: Message = { role: "assistant", content: answer.text };
    if (reasoningModel && answer.reasoning) message.reasoning_content = answer.reasoning;
    if (answer.toolCalls.length > 0) {
      message.tool_calls = answer.toolCalls.map((call) => {
        const [identifier, apiName] = call.name.split(LOBE_SEPARATOR);
        const name = apiName === undefined ? call.name : `${identifier}${LOBE_SEPARATOR}${apiName}`;
        return { id: call.id, type: "function", function: { arguments: call.arguments, name } };
      });
    }
    return [message, ...toolMessages(round, true)];
  });
}

// ---------------------------------------------------------------------------
// Vercel AI SDK: @ai-sdk/openai-compatible `convert-to-openai-compatible-chat-messages.ts`.

/** `safeParseJSON({ text, schema })`: the tool's schema shapes the input (zod drops unknown keys, fills defaults); `""` and invalid JSON are `{}`. */
function aiSdkInput(text: string, schema: ZodType | undefined): unknown {
  let parsed: unknown = {};
  try {
    parsed = text.trim() ? JSON.parse(text) : {};
  } catch {
    parsed = {};
  }
  const shaped = schema?.safeParse(parsed);
  return shaped?.success ? shaped.data : parsed;
}

interface AiSdkOptions {
  /** How the client rewrites a tool-call id before it is sent (opencode does, per model). */
  readonly callId?: (id: string, model: string) => string;
  /** Whether `reasoning_content` goes back for this model (AI SDK ≥ 1.0.32 / 2.0.20: always; opencode: where the model declares the field). */
  readonly sendsReasoning: (model: string) => boolean;
  readonly text?: (text: string) => string;
}

function aiSdkMessages(rounds: readonly Round[], context: FrontendContext, options: AiSdkOptions): Message[] {
  const text = options.text ?? ((value: string) => value);
  const id = options.callId ?? ((value: string) => value);
  return rounds.flatMap((round) => {
    const { answer } = round;
    const calls = answer.toolCalls;
    const message: Message = { role: "assistant", content: calls.length > 0 ? text(answer.text) || null : text(answer.text) };
    if (answer.reasoning && options.sendsReasoning(context.model)) message.reasoning_content = text(answer.reasoning);
    if (calls.length > 0) {
      message.tool_calls = calls.map((call) => ({
        id: id(call.id, context.model),
        type: "function",
        function: { name: call.name, arguments: JSON.stringify(aiSdkInput(call.arguments, context.schemas[call.name])) },
      }));
    }
    return [message, ...round.results.map((result) => ({ role: "tool", tool_call_id: id(result.id, context.model), content: result.content }))];
  });
}

/**
 * The AI SDK (openai-compatible ≥ 2.0.20): text concatenated, `content: null`
 * on a tool-call message without text, arguments `JSON.stringify` of the
 * schema-shaped input, ids verbatim, `reasoning_content` sent back.
 */
export const aiSdk: Frontend = {
  name: "Vercel AI SDK",
  toolName: sameName,
  inTurn: (round, context) => aiSdkMessages([round], context, { sendsReasoning: () => true }),
  history: (rounds, context) => aiSdkMessages(rounds, context, { sendsReasoning: () => true }),
};

/**
 * opencode (`provider/transform.ts`) on the AI SDK: lone surrogates replaced
 * (`sanitizeSurrogates`), tool-call ids rewritten for Claude models
 * (`[^a-zA-Z0-9_-]` → `_`) and Mistral models (9 alphanumerics), reasoning
 * sent under the model's declared interleaved field (DeepSeek's
 * `reasoning_content`), dropped for other models.
 */
export const opencode: Frontend = {
  name: "opencode",
  toolName: sameName,
  inTurn: (round, context) => aiSdkMessages([round], context, OPENCODE),
  history: (rounds, context) => aiSdkMessages(rounds, context, OPENCODE),
};

const OPENCODE: AiSdkOptions = {
  callId(id, model) {
    if (/claude/i.test(model)) return id.replace(/[^a-zA-Z0-9_-]/g, "_");
    if (/mistral/i.test(model))
      return id
        .replace(/[^a-zA-Z0-9]/g, "")
        .slice(0, 9)
        .padEnd(9, "0");
    return id;
  },
  sendsReasoning: (model) => /deepseek/i.test(model),
  text: (value) => value.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd"),
};

export const FRONTENDS: readonly Frontend[] = [openWebUi06, openWebUi07, libreChatCustom, libreChatDeepSeek, lobeChat, aiSdk, opencode];

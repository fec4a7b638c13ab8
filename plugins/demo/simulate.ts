import { type ChatMessage, type ChatRequest, type JsonObject, readArray, readObject, readString, type StreamPart } from "../../src/plugins/plugin-api.js";

/**
 * A deterministic, simulated reasoning model (a SIMULATION: no model runs).
 * It reasons step by step about the last user message, then answers. When
 * the request offers tools and the last message is not a tool result, it
 * calls the first tool instead of answering.
 */
export function simulate(request: ChatRequest, reasoningEnabled: boolean): StreamPart[] {
  const question = lastText(request.messages, "user");
  const lastMessage = request.messages[request.messages.length - 1];
  const toolResult = lastMessage.role === "tool" ? textOf(lastMessage) : undefined;
  const tool = toolResult === undefined ? firstTool(request) : undefined;
  const arithmetic = evaluate(question);

  const steps = [
    `Step 1: the user asks: "${clip(question, 120)}".`,
    toolResult !== undefined
      ? `Step 2: the tool answered: "${clip(toolResult, 120)}". I can answer from that.`
      : tool
        ? `Step 2: a tool named "${tool.name}" is offered; calling it is the best way to answer.`
        : arithmetic !== undefined
          ? `Step 2: this is arithmetic; working it out gives ${arithmetic}.`
          : `Step 2: the message has ${countOf(wordCount(question), "word")}; I will restate it and answer briefly.`,
    `Step 3: ${tool ? "prepare the arguments for the call." : "write the answer."}`,
  ];
  const reasoning = steps.join("\n");

  const parts: StreamPart[] = [{ type: "response-metadata", id: `demo-${hash(JSON.stringify(request.messages))}`, model: "demo-reasoner" }];
  if (reasoningEnabled) for (const piece of words(reasoning)) parts.push({ type: "reasoning-delta", text: piece });

  if (tool) {
    const args = JSON.stringify(argumentsFor(tool.parameters, question));
    parts.push({ type: "tool-call-delta", index: 0, id: `call_demo_${hash(question + tool.name)}`, name: tool.name, arguments: "" });
    for (const piece of chunks(args, 8)) parts.push({ type: "tool-call-delta", index: 0, arguments: piece });
    parts.push(usage(request, reasoning, args), { type: "finish", reason: "tool_calls" });
    return parts;
  }

  const answer =
    toolResult !== undefined
      ? `(simulated) The tool says: ${clip(toolResult, 200)}`
      : arithmetic !== undefined
        ? `(simulated) The answer is ${arithmetic}.`
        : `(simulated) You said: "${clip(question, 200)}". This is carrierd's demo model; route a real provider in routes.yaml for real answers.`;
  for (const piece of words(answer)) parts.push({ type: "text-delta", text: piece });
  parts.push(usage(request, reasoningEnabled ? reasoning : "", answer), { type: "finish", reason: "stop" });
  return parts;
}

function usage(request: ChatRequest, reasoning: string, output: string): StreamPart {
  const prompt = request.messages.reduce((sum, message) => sum + wordCount(textOf(message)), 0);
  const reasoningTokens = wordCount(reasoning);
  const completion = reasoningTokens + wordCount(output);
  return {
    type: "usage",
    usage: {
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt + completion,
      completion_tokens_details: { reasoning_tokens: reasoningTokens },
    },
  };
}

function firstTool(request: ChatRequest): { name: string; parameters: JsonObject | undefined } | undefined {
  const fn = readObject(request.tools?.[0]?.function);
  const name = readString(fn?.name);
  return name === undefined ? undefined : { name, parameters: readObject(fn?.parameters) };
}

/** Fills every required property from the question: strings get it, numbers 1, booleans true. */
function argumentsFor(parameters: JsonObject | undefined, question: string): Record<string, unknown> {
  const properties = readObject(parameters?.properties) ?? {};
  const required = readArray(parameters?.required)?.filter((key) => typeof key === "string") ?? Object.keys(properties).slice(0, 1);
  const args: Record<string, unknown> = {};
  for (const key of required) {
    const type = readString(readObject(properties[key])?.type);
    args[key] = type === "number" || type === "integer" ? 1 : type === "boolean" ? true : clip(question, 80);
  }
  return args;
}

/** Questions longer than this are not searched for arithmetic: the pattern below backtracks quadratically on long digit runs. */
const MAX_ARITHMETIC_INPUT = 500;

/** Plain `12 * (3 + 4)` style arithmetic only; anything else is not arithmetic. */
function evaluate(text: string): number | undefined {
  if (text.length > MAX_ARITHMETIC_INPUT) return undefined;
  const match = /(-?\d+(?:\.\d+)?(?:\s*[-+*/]\s*\(?\s*-?\d+(?:\.\d+)?\s*\)?)+)/.exec(text);
  if (!match) return undefined;
  const expression = match[1];
  if (!/^[\d\s.+\-*/()]+$/.test(expression)) return undefined;
  const value = calculate(expression);
  return value !== undefined && Number.isFinite(value) ? Math.round(value * 1e6) / 1e6 : undefined;
}

/** `+ - * /`, parentheses and unary minus, by the usual precedence; undefined for anything else. */
function calculate(expression: string): number | undefined {
  const tokens = expression.match(/\d+(?:\.\d+)?|[-+*/()]/g) ?? [];
  let at = 0;
  const sum = (): number | undefined => {
    let left = product();
    while (left !== undefined && (tokens[at] === "+" || tokens[at] === "-")) {
      const op = tokens[at++];
      const right = product();
      left = right === undefined ? undefined : op === "+" ? left + right : left - right;
    }
    return left;
  };
  const product = (): number | undefined => {
    let left = factor();
    while (left !== undefined && (tokens[at] === "*" || tokens[at] === "/")) {
      const op = tokens[at++];
      const right = factor();
      left = right === undefined ? undefined : op === "*" ? left * right : left / right;
    }
    return left;
  };
  const factor = (): number | undefined => {
    const token = tokens[at++];
    if (token === "-") {
      const value = factor();
      return value === undefined ? undefined : -value;
    }
    if (token === "(") {
      const value = sum();
      return tokens[at++] === ")" ? value : undefined;
    }
    return token !== undefined && /^\d/.test(token) ? Number(token) : undefined;
  };
  const value = sum();
  return at === tokens.length ? value : undefined;
}

function lastText(messages: ChatMessage[], role: ChatMessage["role"]): string {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i].role === role) return textOf(messages[i]);
  return "";
}

function textOf(message: ChatMessage): string {
  if (typeof message.content === "string") return message.content;
  if (Array.isArray(message.content)) return message.content.map((part) => (typeof part.text === "string" ? part.text : "")).join(" ");
  return "";
}

/** Splits into word-sized pieces that keep their leading space, as a tokenizer would. */
function words(text: string): string[] {
  return text.match(/\s*\S+/g) ?? [];
}

function chunks(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

function wordCount(text: string): number {
  return words(text).length;
}

function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function hash(text: string): string {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return (h >>> 0).toString(16).padStart(8, "0");
}

/** "1 word", "2 words". */
function countOf(count: number, noun: string): string {
  return `${count} ${count === 1 ? noun : `${noun}s`}`;
}

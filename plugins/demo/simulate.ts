import { type ChatMessage, type ChatRequest, type StreamPart } from "../../src/providers/plugin-api.js";
import { evaluate } from "./arithmetic.js";
import { clip, pickTool, type ToolDecision } from "./tool-pick.js";

/**
 * A deterministic, simulated reasoning model (a SIMULATION: no model runs).
 * It reasons step by step about the last user message, then answers. It
 * calls an offered tool only when the message asks for it by name or the
 * tool plainly fits the question, and never one that would run a command
 * or open a path (see tool-pick.ts); its answers say they are simulated.
 */
export function simulate(request: ChatRequest, reasoningEnabled: boolean): StreamPart[] {
  const question = lastText(request.messages, "user");
  const lastMessage = request.messages[request.messages.length - 1];
  const toolResult = lastMessage.role === "tool" ? textOf(lastMessage) : undefined;
  const decision = toolResult === undefined ? pickTool(request, question) : undefined;
  const call = decision?.kind === "call" ? decision : undefined;
  const noCall = decision?.kind === "call" ? undefined : decision;
  const arithmetic = evaluate(question);

  const thoughts = [`the user asks: "${clip(question, 120)}".`];
  if (toolResult !== undefined) thoughts.push(`the tool answered: "${clip(toolResult, 120)}". I can answer from that.`);
  else if (call) thoughts.push(`a tool named "${call.tool.name}" is offered and ${call.why}; calling it is the best way to answer.`);
  else {
    if (noCall) thoughts.push(toolThought(noCall));
    thoughts.push(
      arithmetic !== undefined
        ? `this is arithmetic; working it out gives ${arithmetic}.`
        : `the message has ${countOf(wordCount(question), "word")}; I will restate it and answer briefly.`,
    );
  }
  thoughts.push(call ? "prepare the arguments for the call." : "write the answer.");
  const reasoning = thoughts.map((thought, index) => `Step ${index + 1}: ${thought}`).join("\n");

  const parts: StreamPart[] = [{ type: "response-metadata", id: `demo-${hash(JSON.stringify(request.messages))}`, model: "demo-reasoner" }];
  if (reasoningEnabled) for (const piece of words(reasoning)) parts.push({ type: "reasoning-delta", text: piece });

  if (call) {
    const args = JSON.stringify(call.args);
    parts.push({ type: "tool-call-delta", index: 0, id: `call_demo_${hash(question + call.tool.name)}`, name: call.tool.name, arguments: "" });
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
  const withNote = noCall ? `${answer} ${toolNote(noCall)}` : answer;
  for (const piece of words(withNote)) parts.push({ type: "text-delta", text: piece });
  parts.push(usage(request, reasoningEnabled ? reasoning : "", withNote), { type: "finish", reason: "stop" });
  return parts;
}

/** Why no tool is called, as a step of the reasoning. */
function toolThought(decision: Exclude<ToolDecision, { kind: "call" }>): string {
  if (decision.kind === "decline")
    return `the tool "${decision.tool.name}" is offered and ${decision.why}, but ${decision.argument}, and a simulation must not write commands, code or paths; I answer myself.`;
  const names = decision.offered.slice(0, 5).map((tool) => `"${tool.name}"`);
  const more = decision.offered.length > 5 ? ", …" : "";
  return `${countOf(decision.offered.length, "tool")} offered (${names.join(", ")}${more}), but the message asks for none by name and none fits it; I answer myself.`;
}

/** What the answer adds when tools were offered and none was called: that this is a simulation, and what it does with tools. */
function toolNote(decision: Exclude<ToolDecision, { kind: "call" }>): string {
  const declined = decision.kind === "decline" ? `It did not call "${decision.tool.name}": ` : "It called no tool: ";
  return `${declined}carrierd's demo model is a simulation that calls a tool only when you name it or it plainly fits (a weather tool for a weather question), and never writes commands, code or file paths.`;
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

function hash(text: string): string {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return (h >>> 0).toString(16).padStart(8, "0");
}

/** "1 word", "2 words". */
function countOf(count: number, noun: string): string {
  return `${count} ${count === 1 ? noun : `${noun}s`}`;
}

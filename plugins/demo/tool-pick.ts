import { type ChatRequest, type JsonObject, readArray, readObject, readString } from "../../src/providers/plugin-api.js";

/**
 * Which offered tool the demo calls, if any. The demo runs inside agent
 * CLIs whose first tool is often a shell: it must never turn the user's
 * words into something a client executes. So it calls a tool only when the
 * message (or the client's `tool_choice`) names it, or when the tool's
 * purpose plainly fits the question (a weather tool for a weather
 * question), and it declines any tool whose arguments would be a command,
 * code, a path or a URL.
 */

export interface OfferedTool {
  name: string;
  /** The tool's name and description, as words, for matching a purpose. */
  words: string;
  parameters: JsonObject | undefined;
}

export type ToolDecision =
  /** Call `tool` with `args`; `why` finishes "a tool named … is offered and …". */
  | { kind: "call"; tool: OfferedTool; why: string; args: Record<string, unknown> }
  /** The tool was asked for (or fits) but takes a command-like argument: no call. */
  | { kind: "decline"; tool: OfferedTool; why: string; argument: string }
  /** Tools were offered; none was asked for or fits (or `tool_choice` is "none"). */
  | { kind: "none"; offered: OfferedTool[] };

/** Argument names (split into words) whose value a client may execute, open or fetch. */
const COMMAND_LIKE_WORDS = new Set([
  "cmd",
  "cmds",
  "command",
  "commands",
  "script",
  "scripts",
  "code",
  "shell",
  "exec",
  "executable",
  "program",
  "path",
  "paths",
  "file",
  "files",
  "filename",
  "filenames",
  "filepath",
  "dir",
  "directory",
  "workdir",
  "cwd",
  "args",
  "argv",
  "arguments",
  "input",
  "patch",
  "diff",
  "url",
  "uri",
  "sql",
  "glob",
  "pattern",
  "regex",
]);

/** Tool names (split into words) that act on the machine whatever their arguments are called. */
const ACTING_TOOL_WORDS = new Set([
  "bash",
  "sh",
  "zsh",
  "shell",
  "exec",
  "execute",
  "terminal",
  "powershell",
  "cmd",
  "eval",
  "python",
  "run",
  "apply",
  "patch",
  "write",
  "edit",
  "delete",
  "rm",
]);

/** Purposes the demo recognises: a question about `topic` (`asks`) fits a tool whose name or description matches `tool`. */
const PURPOSES = [
  {
    topic: "a weather question",
    asks: /\b(weather|forecast|temperature|rain(?:ing|y)?|snow(?:ing|y)?|sunny|windy|humid(?:ity)?)\b/i,
    tool: /\b(weather|forecast)/i,
  },
  {
    topic: "a look-up",
    asks: /\b(define|definition|meaning|look(?:ing)? up|lookup|search(?:ing)? for|find out|who (?:is|was))\b/i,
    tool: /\b(look ?up|search|dictionary|define|definition|encyclopedia|wiki)/i,
  },
  { topic: "a question about the time", asks: /\b(what time|current time|time is it|today's date|what date|what day)\b/i, tool: /\b(time|clock|date)\b/i },
];

const PLACE_WORDS = new Set(["location", "city", "place", "town", "country", "region", "where"]);

export function pickTool(request: ChatRequest, question: string): ToolDecision | undefined {
  const offered = offeredTools(request);
  if (offered.length === 0) return undefined;
  const choice = request.tool_choice;
  if (choice === "none") return { kind: "none", offered };
  const forced = readString(readObject(readObject(choice)?.function)?.name);
  const byChoice = forced === undefined ? undefined : offered.find((tool) => tool.name === forced);
  if (byChoice) return decide(byChoice, "the client's tool_choice names it", question);
  const named = offered.find((tool) => namedIn(question, tool.name));
  if (named) return decide(named, "the message asks for it by name", question);
  const fitting = PURPOSES.flatMap((purpose) =>
    purpose.asks.test(question) ? offered.filter((tool) => purpose.tool.test(tool.words)).map((tool) => ({ tool, why: `it fits ${purpose.topic}` })) : [],
  );
  const decisions = fitting.map(({ tool, why }) => decide(tool, why, question));
  return decisions.find((decision) => decision.kind === "call") ?? decisions[0] ?? { kind: "none", offered };
}

function decide(tool: OfferedTool, why: string, question: string): ToolDecision {
  const acting = wordsOf(tool.name).find((word) => ACTING_TOOL_WORDS.has(word));
  if (acting) return { kind: "decline", tool, why, argument: `its name says it acts ("${acting}")` };
  const keys = argumentKeys(tool.parameters);
  const commandLike = keys.find((key) => wordsOf(key).some((word) => COMMAND_LIKE_WORDS.has(word)));
  if (commandLike !== undefined) return { kind: "decline", tool, why, argument: `it takes "${commandLike}"` };
  return { kind: "call", tool, why, args: argumentsFor(tool.parameters, keys, question) };
}

function offeredTools(request: ChatRequest): OfferedTool[] {
  const tools: OfferedTool[] = [];
  for (const entry of request.tools ?? []) {
    const fn = readObject(entry.function);
    const name = readString(fn?.name);
    if (name === undefined) continue;
    tools.push({ name, words: `${wordsOf(name).join(" ")} ${readString(fn?.description) ?? ""}`, parameters: readObject(fn?.parameters) });
  }
  return tools;
}

/** `get_weather`, `getWeather`, `get-weather` → ["get", "weather"]. */
function wordsOf(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

/**
 * The message names the tool: "use the lookup tool", "call get_weather",
 * "`lookup`", or a distinctive name (with `_`, `-` or capitals inside) on
 * its own. A plain word such as "read" or "list" counts only with one of
 * those cues, so ordinary prose does not call a tool.
 */
function namedIn(question: string, name: string): boolean {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const cued = new RegExp(`\`${escaped}\`|\\b(?:use|call|run|invoke|using|with)\\s+(?:the\\s+)?${escaped}\\b|\\b${escaped}\\s+(?:tool|function)\\b`, "i");
  if (cued.test(question)) return true;
  return wordsOf(name).length > 1 && new RegExp(`(?<![\\w-])${escaped}(?![\\w-])`, "i").test(question);
}

/** The required properties; with none listed, the first property (a tool rarely works with no argument at all). */
function argumentKeys(parameters: JsonObject | undefined): string[] {
  const properties = readObject(parameters?.properties) ?? {};
  const required = readArray(parameters?.required)?.filter((key): key is string => typeof key === "string");
  return required ?? Object.keys(properties).slice(0, 1);
}

/** Enums get their first value, numbers 1, booleans true; a place gets the place the question names, other text the question. */
function argumentsFor(parameters: JsonObject | undefined, keys: string[], question: string): Record<string, unknown> {
  const properties = readObject(parameters?.properties) ?? {};
  const args: Record<string, unknown> = {};
  for (const key of keys) {
    const schema = readObject(properties[key]);
    const choices = readArray(schema?.enum);
    const type = readString(schema?.type);
    if (choices && choices.length > 0) args[key] = choices[0];
    else if (type === "number" || type === "integer") args[key] = 1;
    else if (type === "boolean") args[key] = true;
    else if (type === "array") args[key] = [];
    else if (type === "object") args[key] = {};
    else if (wordsOf(key).some((word) => PLACE_WORDS.has(word))) args[key] = placeIn(question) ?? clip(question, 80);
    else args[key] = clip(question, 80);
  }
  return args;
}

/** "What's the weather in San Francisco?" → "San Francisco". */
function placeIn(question: string): string | undefined {
  return /\b(?:in|at|for)\s+(\p{Lu}[\p{L}.'-]*(?:\s+\p{Lu}[\p{L}.'-]*)*)/u.exec(question)?.[1];
}

export function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

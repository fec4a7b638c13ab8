import { createHmac, randomBytes } from "node:crypto";
import { startEmulator, type Emulator, type Received, type Reply } from "./http-emulator.js";

/**
 * A Gemini API emulator that enforces thought signatures the way Gemini 3
 * does (https://ai.google.dev/gemini-api/docs/thought-signatures), with its exact error bodies:
 *
 * - in the current turn (the model contents after the last user text), the
 *   first functionCall part of each model content must carry a
 *   `thoughtSignature` — "Function call is missing a thought_signature in
 *   functionCall parts. …";
 * - a signature must be one this server issued for exactly that part (an
 *   HMAC over the call or text), or the documented skip value;
 * - unknown fields are "Invalid JSON payload received. Unknown name … Cannot find field."
 *
 * It answers a question with a thought summary and two parallel calls of the
 * first tool (only the first signed), and function responses with a thought
 * summary and text whose signature rides on a trailing empty text part when
 * streaming. Asked for `generationConfig.responseLogprobs`, each response's
 * candidate has a `logprobsResult` for its answer text (a token per word,
 * `logprobs` alternatives per token).
 */
const SECRET = randomBytes(32);
export const SKIP = "skip_thought_signature_validator";
const TOP_LEVEL = new Set(["contents", "systemInstruction", "generationConfig", "tools", "toolConfig", "safetySettings", "cachedContent", "labels"]);
const PART_KEYS = new Set(["text", "thought", "thoughtSignature", "functionCall", "functionResponse", "inlineData", "fileData"]);

type Part = Record<string, unknown>;
type Content = { role?: string; parts: Part[] } & Record<string, unknown>;

export function signPart(part: Part): string {
  const subject = part.functionCall ? `call:${stable(part.functionCall)}` : `text:${String(part.text)}`;
  return createHmac("sha256", SECRET).update(subject).digest("base64");
}

export async function startGeminiEmulator(options: { apiKey: string }): Promise<Emulator> {
  return startEmulator((request) => handle(request, options.apiKey));
}

function error(message: string, status = 400, code = "INVALID_ARGUMENT"): Reply {
  return { status, json: { error: { code: status, message, status: code } } };
}

function handle(request: Received, apiKey: string): Reply {
  // streamGenerateContent without alt=sse: the same chunks as one JSON array, as Google answers it
  const route = /^\/v1beta\/models\/([^:]+):(generateContent|streamGenerateContent\?alt=sse|streamGenerateContent)$/.exec(request.path);
  if (request.method !== "POST" || !route) return error("Not found", 404, "NOT_FOUND");
  if (request.headers["x-goog-api-key"] !== apiKey) return error("API key not valid. Please pass a valid API key.");
  const body = request.body;
  if (!body) return error("Invalid JSON payload received.");
  for (const key of Object.keys(body)) if (!TOP_LEVEL.has(key)) return error(`Invalid JSON payload received. Unknown name "${key}": Cannot find field.`);
  const contents = body.contents as Content[];
  const problem = check(contents);
  if (problem) return problem;
  const stream = route[2] !== "generateContent";
  const parts = answer(contents, (body.tools as { functionDeclarations: { name: string }[] }[] | undefined)?.[0]?.functionDeclarations ?? [], stream);
  const usageMetadata = { promptTokenCount: 20, candidatesTokenCount: 8, thoughtsTokenCount: 12, totalTokenCount: 40 };
  const chunks = stream ? parts.map((part) => [part]) : [parts];
  const config = (body.generationConfig ?? {}) as { responseLogprobs?: boolean; logprobs?: number };
  const responses = chunks.map((chunk, index) => ({
    candidates: [
      {
        content: { role: "model", parts: chunk },
        index: 0,
        ...(config.responseLogprobs === true ? { logprobsResult: logprobsOf(chunk, config.logprobs ?? 0) } : {}),
        ...(index === chunks.length - 1 ? { finishReason: "STOP" } : {}),
      },
    ],
    usageMetadata,
    modelVersion: route[1],
    responseId: "resp-1",
  }));
  if (!stream) return { status: 200, json: responses[0] };
  if (route[2] === "streamGenerateContent") return { status: 200, json: responses };
  return { status: 200, sse: responses.map((response) => `data: ${JSON.stringify(response)}\r\n\r\n`).join("") };
}

function check(contents: Content[]): Reply | undefined {
  if (!Array.isArray(contents) || contents.length === 0) return error("* GenerateContentRequest.contents: contents is not specified");
  for (const [i, content] of contents.entries()) {
    for (const key of Object.keys(content))
      if (key !== "role" && key !== "parts") return error(`Invalid JSON payload received. Unknown name "${key}" at 'contents[${i}]': Cannot find field.`);
    for (const [j, part] of content.parts.entries()) {
      for (const key of Object.keys(part))
        if (!PART_KEYS.has(key)) return error(`Invalid JSON payload received. Unknown name "${key}" at 'contents[${i}].parts[${j}]': Cannot find field.`);
      const signature = part.thoughtSignature;
      if (typeof signature === "string" && signature !== SKIP && signature !== signPart(part)) return error("Corrupted thought signature.");
    }
  }
  const turnStart = contents.findLastIndex((content) => content.role === "user" && content.parts.some((part) => typeof part.text === "string")) + 1;
  for (let i = turnStart; i < contents.length; i++) {
    const content = contents[i]!;
    if (content.role !== "model") continue;
    const first = content.parts.find((part) => part.functionCall);
    if (first && typeof first.thoughtSignature !== "string") {
      const name = (first.functionCall as { name: string }).name;
      return error(
        `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${name}\` , position ${i + 1}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`,
      );
    }
  }
  return undefined;
}

function answer(contents: Content[], tools: { name: string }[], stream: boolean): Part[] {
  const last = contents.at(-1)!;
  const results = last.parts.filter((part) => part.functionResponse);
  if (results.length > 0) {
    const said = results.map((part) => String((part.functionResponse as { response: { result: unknown } }).response.result)).join(" and ");
    const text = `It is ${said}.`;
    const thought = { text: "**Answering**\n\nThe tools answered.", thought: true };
    if (!stream) return [thought, signed({ text })];
    return [thought, { text: text.slice(0, 4) }, { text: text.slice(4) }, signed({ text: "" })];
  }
  if (tools.length > 0) {
    const name = tools[0]!.name;
    return [
      { text: "**Planning**\n\nI will look up both cities at once.", thought: true },
      signed({ functionCall: { name, args: { location: "Rome" }, id: randomBytes(4).toString("hex") } }),
      { functionCall: { name, args: { location: "Oslo" }, id: randomBytes(4).toString("hex") } },
    ];
  }
  return [signed({ text: "Hello." })];
}

/** Gemini's `logprobsResult` for the answer text of some parts: a token per word, the chosen one first among its `alternatives`. */
function logprobsOf(parts: Part[], alternatives: number): Record<string, unknown> {
  const tokens = parts.flatMap((part) => (part.thought || typeof part.text !== "string" ? [] : (part.text.match(/\s*\S+/g) ?? [])));
  const chosen = tokens.map((token, index) => ({ token, tokenId: index, logProbability: -0.25 * (index + 1) }));
  return {
    topCandidates: chosen.map((candidate) => ({
      candidates: [candidate, { token: " else", tokenId: 9999, logProbability: -3.5 }].slice(0, alternatives),
    })),
    chosenCandidates: chosen,
  };
}

function signed(part: Part): Part {
  return { ...part, thoughtSignature: signPart(part) };
}

/** JSON with sorted keys: a signature binds the call's meaning, not its key order. */
function stable(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stable).join(",")}]`;
  if (value && typeof value === "object")
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${stable((value as Record<string, unknown>)[key])}`)
      .join(",")}}`;
  return JSON.stringify(value);
}

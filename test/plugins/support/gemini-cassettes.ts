import type { ChatMessage, JsonObject } from "../../../src/providers/contract.js";
import { cassette, json, type Interaction } from "./fixtures.js";

/** The Gemini cassettes with real turn-2 requests, and what the client asked for in each. */
export const GEMINI_CASSETTES = [
  "TestGoogleThinking/gemini-3-pro-preview/thinking",
  "TestGoogleThinking/gemini-3-pro-preview/thinking-streaming",
  "TestGoogleThinking/gemini-2.5-pro/thinking",
  "TestGoogleThinking/gemini-2.5-pro/thinking-streaming",
  "TestGoogleThinking/gemini-2.5-flash/thinking",
  "TestGoogleThinking/gemini-2.5-flash/thinking-streaming",
  "TestGoogleCommon/gemini-3-pro-preview/tool",
  "TestGoogleCommon/gemini-3-pro-preview/tool_streaming",
  "TestGoogleCommon/gemini-3-pro-preview/multi_tool",
  "TestGoogleCommon/gemini-3-pro-preview/multi_tool_streaming",
] as const;

export interface GeminiScenario {
  interactions: Interaction[];
  model: string;
  stream: boolean;
  /** The OpenAI-chat request a client would have sent for turn 1 (without messages). */
  request: JsonObject;
  /** The routes.yaml params that produce the recorded thinkingConfig, if any. */
  params: JsonObject | undefined;
  system: ChatMessage;
  user: ChatMessage;
  /** Tool results of turn 2, in call order. */
  results: string[];
}

/** Reads a cassette back into the client request that produced it. */
export function geminiScenario(path: string): GeminiScenario {
  const interactions = cassette(path);
  const first = json(interactions[0]!.request.body) as JsonObject;
  const second = json(interactions[1]!.request.body) as JsonObject;
  const model = /models\/([^:]+):/.exec(interactions[0]!.request.url)![1]!;
  const generation = (first.generationConfig ?? {}) as JsonObject;
  const thinking = generation.thinkingConfig as JsonObject | undefined;
  const declarations = ((first.tools as JsonObject[])[0]!.functionDeclarations as JsonObject[]).map((declaration) => ({
    type: "function",
    function: { name: declaration.name, description: declaration.description, parameters: lowerTypes(declaration.parameters) },
  }));
  const request: JsonObject = { tools: declarations as unknown as JsonObject[], tool_choice: "auto" };
  if (typeof generation.maxOutputTokens === "number") request.max_tokens = generation.maxOutputTokens;
  // Gemini 3 cassettes: the client's reasoning_effort; 2.5: a thinking budget pinned in routes.yaml params
  if (thinking?.thinkingLevel) request.reasoning_effort = String(thinking.thinkingLevel).toLowerCase();
  const params = thinking?.thinkingBudget !== undefined ? { generationConfig: { thinkingConfig: thinking } } : undefined;
  const contents = second.contents as JsonObject[];
  const results = ((contents[2]!.parts as JsonObject[]) ?? []).map((part) => String(((part.functionResponse as JsonObject).response as JsonObject).result));
  return {
    interactions,
    model,
    stream: interactions[0]!.request.url.includes("streamGenerateContent"),
    request,
    params,
    system: { role: "system", content: String(((first.systemInstruction as JsonObject).parts as JsonObject[])[0]!.text) },
    user: { role: "user", content: String(((first.contents as JsonObject[])[0]!.parts as JsonObject[])[0]!.text) },
    results,
  };
}

/**
 * The recorded turn-2 body with the call ids the recording client invented
 * removed: Gemini 2.5 returns calls without an id and fantasy numbered them
 * "1", "2"…; carrierd sends back only ids Gemini itself gave.
 */
export function expectedTurn2(scenario: GeminiScenario): JsonObject {
  const body = json(scenario.interactions[1]!.request.body) as JsonObject;
  const answered = scenario.interactions[0]!.response.body;
  const givenByGemini = (id: string) => new RegExp(`"id\\\\?"\\s*:\\s*\\\\?"${id}\\\\?"`).test(answered);
  for (const content of body.contents as JsonObject[]) {
    for (const part of content.parts as JsonObject[]) {
      for (const key of ["functionCall", "functionResponse"]) {
        const value = part[key] as JsonObject | undefined;
        if (typeof value?.id === "string" && !givenByGemini(value.id)) delete value.id;
      }
    }
  }
  return body;
}

function lowerTypes(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(lowerTypes);
  if (!schema || typeof schema !== "object") return schema;
  return Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [key, key === "type" && typeof value === "string" ? value.toLowerCase() : lowerTypes(value)]),
  );
}

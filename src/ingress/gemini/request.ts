import geminiSchema from "../../../schemas/requests/gemini.schema.json" with { type: "json" };
import { requestValidator } from "../request-schema.js";
import type { JsonObject } from "../../providers/contract.js";

/** One part of a content: text (a thought when `thought`), inline or file data, a function call or its response. */
export interface GeminiPart {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  inlineData?: { mimeType: string; data: string };
  fileData?: { mimeType?: string; fileUri: string };
  functionCall?: { id?: string; name: string; args?: JsonObject };
  functionResponse?: { id?: string; name: string; response?: JsonObject };
  [key: string]: unknown;
}

export interface GeminiContent {
  role?: "user" | "model" | "function" | "system";
  parts: GeminiPart[];
  [key: string]: unknown;
}

export interface FunctionDeclaration {
  name: string;
  description?: string;
  /** Gemini's `Schema` (an OpenAPI 3.0 subset, upper-case types). */
  parameters?: JsonObject;
  /** Plain JSON Schema (what Gemini CLI sends). */
  parametersJsonSchema?: JsonObject;
  [key: string]: unknown;
}

export interface GenerationConfig {
  temperature?: number;
  topP?: number;
  topK?: number;
  maxOutputTokens?: number;
  candidateCount?: number;
  stopSequences?: string[];
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  responseMimeType?: string;
  responseSchema?: JsonObject;
  responseJsonSchema?: JsonObject;
  thinkingConfig?: { includeThoughts?: boolean; thinkingBudget?: number; thinkingLevel?: string };
  [key: string]: unknown;
}

/** A GenerateContentRequest body, as the schema (schemas/requests/gemini.schema.json) accepts it; the model is in the path. */
export interface GenerateContentRequest {
  contents: GeminiContent[];
  systemInstruction?: GeminiContent;
  tools?: { functionDeclarations?: FunctionDeclaration[]; [key: string]: unknown }[];
  toolConfig?: { functionCallingConfig?: { mode?: string; allowedFunctionNames?: string[] } };
  generationConfig?: GenerationConfig;
  [key: string]: unknown;
}

/** Checks a body against the GenerateContentRequest schema; a 400 naming the parameter otherwise. */
export const validateGenerateRequest = requestValidator<GenerateContentRequest>(geminiSchema);

/**
 * countTokens takes `contents` (with `systemInstruction` and `tools` at the
 * top as the SDKs may send them) or a whole `generateContentRequest`: the
 * request whose input is counted.
 */
export function countedRequest(body: unknown): GenerateContentRequest {
  if (typeof body === "object" && body !== null && !Array.isArray(body)) {
    const nested = (body as JsonObject).generateContentRequest;
    if (nested !== undefined) return validateGenerateRequest(nested);
  }
  return validateGenerateRequest(body);
}

import { createHmac, randomBytes } from "node:crypto";
import { encodeEvent } from "../../../plugins/bedrock/event-stream.js";
import { startEmulator, type Emulator, type Received, type Reply } from "./http-emulator.js";
import { verifySigV4 } from "./sigv4-verifier.js";

/**
 * An Amazon Bedrock Converse / ConverseStream emulator:
 * - every request's SigV4 signature is recomputed from the raw bytes (403
 *   InvalidSignatureException when one byte differs);
 * - errors are Bedrock's ValidationException shape (400, `x-amzn-errortype`,
 *   `{"message"}`), relaying Claude's own texts as Bedrock does ("The model
 *   returned the following errors: …");
 * - Claude: signatures are HMACs over the reasoning text, redacted content
 *   carries its own MAC, and with thinking on the last tool-use turn must
 *   start with reasoning; other models accept readable reasoning text only
 *   (the wording of that refusal is the emulator's own);
 * - streams use the binary event-stream framing with the real event names.
 */
const SECRET = randomBytes(32);
const TOP_LEVEL = new Set([
  "messages",
  "system",
  "inferenceConfig",
  "toolConfig",
  "additionalModelRequestFields",
  "guardrailConfig",
  "performanceConfig",
  "promptVariables",
  "requestMetadata",
  "additionalModelResponseFieldPaths",
]);
const CLAUDE_FIELDS = new Set(["thinking", "anthropic_beta", "top_k", "output_config"]);

type Block = Record<string, unknown>;
type Message = { role: string; content: Block[] };

export interface BedrockEmulatorOptions {
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  redacted?: boolean;
  /** Refuse any redactedContent sent back (the refusal's wording is the emulator's own). */
  refuseRedacted?: boolean;
}

export function signReasoning(text: string): string {
  return createHmac("sha256", SECRET).update(text).digest("base64");
}

export async function startBedrockEmulator(options: BedrockEmulatorOptions): Promise<Emulator> {
  return startEmulator((request) => handle(request, options));
}

export function validation(message: string, status = 400, type = "ValidationException"): Reply {
  return { status, json: { message }, headers: { "x-amzn-errortype": `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/` } };
}

function handle(request: Received, options: BedrockEmulatorOptions): Reply {
  const unsigned = verifySigV4(request, options.credentials, "bedrock");
  if (unsigned) return validation(unsigned, 403, unsigned.startsWith("The request signature") ? "InvalidSignatureException" : "UnrecognizedClientException");
  const route = /^\/model\/([^/]+)\/(converse|converse-stream)$/.exec(request.path);
  if (!route) return validation("The requested operation is not recognized by the service.", 404, "UnknownOperationException");
  const model = decodeURIComponent(route[1]!);
  const body = request.body;
  if (!body) return validation("Malformed input request, please reformat your input and try again.");
  for (const key of Object.keys(body))
    if (!TOP_LEVEL.has(key))
      return validation(`Malformed input request: #: extraneous key [${key}] is not permitted, please reformat your input and try again.`);
  const claude = model.includes("claude");
  const extra = (body.additionalModelRequestFields ?? {}) as Record<string, unknown>;
  if (claude)
    for (const key of Object.keys(extra))
      if (!CLAUDE_FIELDS.has(key)) return validation(`The model returned the following errors: ${key}: Extra inputs are not permitted`);
  const thinkingOn = claude && (extra.thinking as { type?: string } | undefined)?.type === "enabled";
  if (options.refuseRedacted && JSON.stringify(body.messages).includes('"redactedContent"'))
    return validation("The model returned the following errors: redacted_thinking blocks are not supported for this model");
  const problem = check(body.messages as Message[], claude, thinkingOn);
  if (problem) return validation(problem);
  const content = answer(body, claude, thinkingOn, options.redacted === true);
  const stopReason = content.some((block) => block.toolUse) ? "tool_use" : "end_turn";
  const usage = { inputTokens: 30, outputTokens: 12, totalTokens: 42 };
  if (route[2] === "converse")
    return { status: 200, json: { output: { message: { role: "assistant", content } }, stopReason, usage, metrics: { latencyMs: 5 } } };
  return { status: 200, bytes: Buffer.concat(stream(content, stopReason, usage)), contentType: "application/vnd.amazon.eventstream" };
}

function check(messages: Message[], claude: boolean, thinkingOn: boolean): string | undefined {
  for (const [i, message] of messages.entries()) {
    for (const [j, block] of message.content.entries()) {
      const reasoning = block.reasoningContent as { reasoningText?: { text: string; signature?: string }; redactedContent?: string } | undefined;
      if (!reasoning) continue;
      if (!claude) {
        if (reasoning.redactedContent !== undefined || reasoning.reasoningText?.signature !== undefined)
          return `messages.${i}.content.${j}: this model does not accept signed or redacted reasoning`;
        continue;
      }
      if (reasoning.reasoningText && reasoning.reasoningText.signature !== signReasoning(reasoning.reasoningText.text)) {
        return `The model returned the following errors: messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`;
      }
      if (reasoning.redactedContent !== undefined) {
        const [payload, mac] = Buffer.from(reasoning.redactedContent, "base64").toString("utf8").split(".");
        if (!payload || mac !== signReasoning(payload))
          return `The model returned the following errors: messages.${i}.content.${j}: Invalid \`data\` in \`redacted_thinking\` block`;
      }
    }
  }
  if (!thinkingOn) return undefined;
  const lastAssistant = messages.findLastIndex((message) => message.role === "assistant");
  const final = messages[lastAssistant];
  if (!final || !final.content.some((block) => block.toolUse) || final.content[0]?.reasoningContent) return undefined;
  const found = final.content[0]?.toolUse ? "tool_use" : "text";
  return `The model returned the following errors: messages.${lastAssistant}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${found}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking`;
}

function answer(body: Record<string, unknown>, claude: boolean, thinkingOn: boolean, redacted: boolean): Block[] {
  const messages = body.messages as Message[];
  const last = messages.at(-1)!;
  const results = last.content.filter((block) => block.toolResult);
  const tools = ((body.toolConfig as { tools?: { toolSpec: { name: string } }[] } | undefined)?.tools ?? []).map((tool) => tool.toolSpec.name);
  const blocks: Block[] = [];
  const reason = (text: string) => {
    if (thinkingOn) blocks.push({ reasoningContent: { reasoningText: { text, signature: signReasoning(text) } } });
    else if (!claude) blocks.push({ reasoningContent: { reasoningText: { text } } });
  };
  if (results.length > 0) {
    const said = results.map((block) => (block.toolResult as { content: { text: string }[] }).content[0]?.text ?? "").join(" and ");
    reason(`The tool said ${said}.`);
    blocks.push({ text: `It is ${said}.` });
  } else if (tools.length > 0) {
    if (thinkingOn && redacted) {
      const payload = randomBytes(12).toString("hex");
      blocks.push({ reasoningContent: { redactedContent: Buffer.from(`${payload}.${signReasoning(payload)}`).toString("base64") } });
    }
    reason(`I should call ${tools[0]}.`);
    blocks.push({ toolUse: { toolUseId: `tooluse_${randomBytes(8).toString("hex")}`, name: tools[0], input: { location: "Florence" } } });
  } else {
    reason("Nothing to look up.");
    blocks.push({ text: "Hello." });
  }
  return blocks;
}

/** ConverseStream frames for the same content. */
function stream(content: Block[], stopReason: string, usage: object): Uint8Array[] {
  const frames: Uint8Array[] = [encodeEvent("messageStart", { role: "assistant", p: "abc" })];
  content.forEach((block, contentBlockIndex) => {
    const reasoning = block.reasoningContent as { reasoningText?: { text: string; signature?: string }; redactedContent?: string } | undefined;
    if (reasoning?.reasoningText) {
      const { text, signature } = reasoning.reasoningText;
      for (const piece of [text.slice(0, 5), text.slice(5)])
        frames.push(encodeEvent("contentBlockDelta", { contentBlockIndex, delta: { reasoningContent: { text: piece } } }));
      if (signature) frames.push(encodeEvent("contentBlockDelta", { contentBlockIndex, delta: { reasoningContent: { signature } } }));
    } else if (reasoning?.redactedContent) {
      frames.push(encodeEvent("contentBlockDelta", { contentBlockIndex, delta: { reasoningContent: { redactedContent: reasoning.redactedContent } } }));
    } else if (typeof block.text === "string") {
      frames.push(encodeEvent("contentBlockDelta", { contentBlockIndex, delta: { text: block.text } }));
    } else if (block.toolUse) {
      const tool = block.toolUse as { toolUseId: string; name: string; input: unknown };
      frames.push(encodeEvent("contentBlockStart", { contentBlockIndex, start: { toolUse: { toolUseId: tool.toolUseId, name: tool.name } } }));
      const input = JSON.stringify(tool.input);
      for (const piece of [input.slice(0, 4), input.slice(4)])
        frames.push(encodeEvent("contentBlockDelta", { contentBlockIndex, delta: { toolUse: { input: piece } } }));
    }
    frames.push(encodeEvent("contentBlockStop", { contentBlockIndex }));
  });
  frames.push(encodeEvent("messageStop", { stopReason }));
  frames.push(encodeEvent("metadata", { usage, metrics: { latencyMs: 5 } }));
  return frames;
}

import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { readFixture } from "../support/fixtures-dir.js";

/** One recorded DeepSeek exchange: the stream (one JSON chunk per line) and the same answer whole. */
function recording(name: string): { chunks: string[]; whole: string } {
  const chunks = readFixture(`chunks/deepseek/${name}.chunks.txt`)
    .split("\n")
    .filter((line) => line.trim());
  return { chunks, whole: readFixture(`chunks/deepseek/${name}.json`) };
}

export interface ToolCallingUpstream {
  readonly baseUrl: string;
  /** Every request body received, parsed, in order. */
  readonly requests: { model: string; tools?: { type: string; function?: { name: string } }[]; messages: Record<string, unknown>[] }[];
  /** The function the next tool-call answer calls; the first function offered when unset. */
  callName: string | undefined;
  close(): Promise<void>;
}

/** DeepSeek's own 400 when an earlier tool-call turn comes back without its reasoning (thinking mode, 2026). */
const MISSING_REASONING = {
  error: {
    message: "The `reasoning_content` in the thinking mode must be passed back to the API.",
    type: "invalid_request_error",
    param: null,
    code: "invalid_request_error",
  },
};

/**
 * A loopback DeepSeek in thinking mode for agent tool loops: it answers a
 * request that offers tools, and does not end on a tool result, with the
 * recorded DeepSeek tool-call turn, calling `callName` (or the first function
 * offered) in place of the recording's `weather`; any other request with the
 * recorded plain reasoning answer. As DeepSeek does, it refuses with its
 * 400 a history whose assistant tool-call turn lacks its `reasoning_content`.
 */
export async function startToolCallingDeepSeek(): Promise<ToolCallingUpstream> {
  const toolCall = recording("deepseek-tool-call");
  const plain = recording("deepseek-reasoning");
  const state: ToolCallingUpstream = {
    baseUrl: "",
    requests: [],
    callName: undefined,
    close: async () => undefined,
  };
  const server: Server = createServer((request, response) => {
    let text = "";
    request.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
    request.on("end", () => {
      const body = JSON.parse(text) as ToolCallingUpstream["requests"][number] & { stream?: boolean };
      state.requests.push(body);
      const unreasoned = body.messages.some(
        (message) => message.role === "assistant" && Array.isArray(message.tool_calls) && typeof message.reasoning_content !== "string",
      );
      if (unreasoned) {
        response.writeHead(400, { "content-type": "application/json" });
        response.end(JSON.stringify(MISSING_REASONING));
        return;
      }
      const last = body.messages[body.messages.length - 1];
      const name = state.callName ?? body.tools?.find((tool) => tool.type === "function")?.function?.name;
      const callsTool = Boolean(body.tools?.length) && last?.role !== "tool" && name !== undefined;
      const answer = callsTool ? renamed(toolCall, name!) : plain;
      if (!body.stream) {
        response.writeHead(200, { "content-type": "application/json" });
        response.end(answer.whole);
        return;
      }
      response.writeHead(200, { "content-type": "text/event-stream" });
      for (const chunk of answer.chunks) response.write(`data: ${chunk}\n\n`);
      response.end("data: [DONE]\n\n");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}

/** The recorded turn calling `name` instead of `weather`. */
function renamed(answer: { chunks: string[]; whole: string }, name: string): { chunks: string[]; whole: string } {
  const swap = (text: string) => text.replace(/"name":\s*"weather"/, `"name":${JSON.stringify(name)}`);
  return { chunks: answer.chunks.map(swap), whole: swap(answer.whole) };
}

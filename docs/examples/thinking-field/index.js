// A third-party carrierd plugin: an OpenAI-style chat completions upstream
// whose reasoning travels as `thinking` (in deltas, in the message, and
// back on assistant turns of later requests), where carrierd's standard
// carrier fields would be rejected as unknown.
import { readFileSync } from "node:fs";
import { definePlugin } from "carrierd/plugin";

const schema = JSON.parse(readFileSync(new URL("./native.schema.json", import.meta.url), "utf8"));
const CARRIER_KEYS = ["reasoning_content", "reasoning", "reasoning_details", "native_record"];

/** The canonical request as this upstream reads it: a stored turn's reasoning goes back as `thinking`, nothing else extra. */
function buildRequest(call) {
  const messages = call.body.messages.map((message) => {
    const wire = Object.fromEntries(Object.entries(message).filter(([key]) => !CARRIER_KEYS.includes(key)));
    if (message.role === "assistant" && typeof message.native_record?.thinking === "string") wire.thinking = message.native_record.thinking;
    return wire;
  });
  const { model_options, ...body } = call.body;
  const headers = { "content-type": "application/json", ...call.provider.headers };
  if (call.apiKey) headers.authorization = `Bearer ${call.apiKey}`;
  return { url: `${call.provider.baseUrl}/chat/completions`, headers, body: JSON.stringify({ ...body, messages, stream: call.stream }) };
}

/** One answer, whole: its reasoning is shown (reasoning-delta) and kept (native-record). */
function decodeResponse(body) {
  const choice = body.choices?.[0] ?? {};
  const message = choice.message ?? {};
  const parts = [];
  if (message.thinking) parts.push({ type: "reasoning-delta", text: message.thinking }, { type: "native-record", record: { thinking: message.thinking } });
  if (message.content) parts.push({ type: "text-delta", text: message.content });
  (message.tool_calls ?? []).forEach((call, index) =>
    parts.push({ type: "tool-call-delta", index, id: call.id, name: call.function.name, arguments: call.function.arguments }),
  );
  if (body.usage) parts.push({ type: "usage", usage: body.usage });
  parts.push({ type: "finish", reason: choice.finish_reason ?? "stop" });
  return parts;
}

/** A stream: reasoning deltas shown as they come, and kept whole once the answer finishes. */
function createStreamDecoder() {
  let thinking = "";
  return (event) => {
    if (event.data === "[DONE]") return [];
    const chunk = JSON.parse(event.data);
    const parts = [];
    for (const choice of chunk.choices ?? []) {
      const delta = choice.delta ?? {};
      if (delta.thinking) {
        thinking += delta.thinking;
        parts.push({ type: "reasoning-delta", text: delta.thinking });
      }
      if (delta.content) parts.push({ type: "text-delta", text: delta.content });
      for (const call of delta.tool_calls ?? [])
        parts.push({ type: "tool-call-delta", index: call.index, id: call.id, name: call.function?.name, arguments: call.function?.arguments });
      if (choice.finish_reason) {
        if (thinking) parts.push({ type: "native-record", record: { thinking } });
        parts.push({ type: "finish", reason: choice.finish_reason });
      }
    }
    if (chunk.usage) parts.push({ type: "usage", usage: chunk.usage });
    return parts;
  };
}

export default definePlugin({
  name: "thinking-field",
  apiVersion: 1,
  description: "OpenAI-style upstreams whose reasoning travels as `thinking` (example third-party plugin)",
  native: { type: "thinking-field.native", schema },
  create(context) {
    const codec = { buildRequest, decodeResponse, createStreamDecoder };
    return { invoke: (call) => context.http.send(codec, call) };
  },
});

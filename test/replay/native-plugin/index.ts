import { openAICompatibleCodec } from "../../../plugins/openai-compatible/codec.js";
import { definePlugin, partsOf, PLUGIN_API_VERSION, type HttpCodec, type JsonObject, type StreamPart } from "../../../src/providers/contract.js";

/**
 * A Copilot-style test plugin: its provider returns `reasoning_text` plus an
 * encrypted `reasoning_opaque` (streamed in fragments, concatenated), which
 * this plugin keeps as its native record and puts back on the wire only from
 * `native_record` — the core never learns the field's name.
 */
const codec: HttpCodec = {
  buildRequest(call) {
    const messages = call.body.messages.map((message) => {
      if (!message.native_record) return message;
      const { native_record: record, ...rest } = message;
      return { ...rest, reasoning_opaque: record.opaque };
    });
    return openAICompatibleCodec.buildRequest({ ...call, body: { ...call.body, messages } });
  },
  decodeResponse(body) {
    const message = ((body.choices as JsonObject[] | undefined)?.[0]?.message ?? {}) as JsonObject;
    return [...openAICompatibleCodec.decodeResponse(body), ...nativeParts(message)];
  },
  createStreamDecoder() {
    const decode = openAICompatibleCodec.createStreamDecoder();
    return (event) => {
      const delta = ((JSON.parse(event.data) as JsonObject).choices as JsonObject[] | undefined)?.[0]?.delta as JsonObject | undefined;
      return [...partsOf(decode(event)), ...(delta ? nativeParts(delta) : [])];
    };
  },
};

function nativeParts(message: JsonObject): StreamPart[] {
  const parts: StreamPart[] = [];
  if (typeof message.reasoning_text === "string" && message.reasoning_text) parts.push({ type: "reasoning-delta", text: message.reasoning_text });
  if (message.reasoning_opaque !== undefined)
    parts.push({ type: "native-record", record: { type: "native-test.assistant", opaque: message.reasoning_opaque } });
  return parts;
}

export default definePlugin({
  name: "native-test",
  apiVersion: PLUGIN_API_VERSION,
  description: "TEST ONLY: Copilot-style reasoning_opaque as a native record",
  native: {
    type: "native-test.assistant",
    schema: {
      type: "object",
      required: ["type", "opaque"],
      properties: { type: { const: "native-test.assistant" }, opaque: { type: "string" } },
      additionalProperties: false,
    },
  },
  create(context) {
    return {
      invoke: (call) => context.http.send(codec, call),
      // opaque fragments concatenate (Copilot splits one opaque across chunks); anything else is taken as sent
      mergeNative: (collected, fragment) => ({
        type: "native-test.assistant",
        opaque:
          typeof collected?.opaque === "string" && typeof fragment.opaque === "string"
            ? collected.opaque + fragment.opaque
            : (fragment.opaque ?? collected?.opaque ?? ""),
      }),
    };
  },
});

// The bench upstream's Responses API answers (POST …/responses), the same
// words as its chat answers (upstream.mjs): REASONING_CHUNKS summary deltas
// of one reasoning item carrying an encrypted_content blob of BLOB_BYTES
// (default 2048: OpenAI's run to several KB), then CONTENT_CHUNKS text
// deltas, then response.completed — written at once, like a cache hit. It
// checks what the plugin must send (store: false, the include, each replayed
// reasoning item with its blob) and answers 400 otherwise, so a benchmark
// can never measure a request the real API would refuse.
const blobBytes = Number(process.env.BLOB_BYTES ?? 2048);
export const BLOB = `gAAAAA${Buffer.alloc(Math.ceil((blobBytes * 3) / 4), 7).toString("base64")}`.slice(0, blobBytes);

/** Answers one Responses request on `response`. */
export function answerResponses(body, response, { reasoningChunks, contentChunks }) {
  const input = Array.isArray(body.input) ? body.input : [];
  const refused = problemOf(body, input);
  if (refused) {
    response
      .writeHead(400, { "content-type": "application/json" })
      .end(JSON.stringify({ error: { message: refused, type: "invalid_request_error", param: null, code: null } }));
    return;
  }
  const turn = input.filter((item) => item.type === "message" && item.role === "assistant").length;
  const id = `resp_bench${turn}`;
  const summary = Array.from({ length: reasoningChunks }, (_, i) => ` think${turn}.${i}`);
  const words = Array.from({ length: contentChunks }, (_, i) => ` word${turn}.${i}`);
  const reasoning = { id: `rs_bench${turn}`, type: "reasoning", summary: [{ type: "summary_text", text: summary.join("") }], encrypted_content: BLOB };
  const message = {
    id: `msg_bench${turn}`,
    type: "message",
    status: "completed",
    role: "assistant",
    content: [{ type: "output_text", annotations: [], text: words.join("") }],
  };
  const usage = {
    input_tokens: 100,
    output_tokens: reasoningChunks + contentChunks,
    total_tokens: 100 + reasoningChunks + contentChunks,
    output_tokens_details: { reasoning_tokens: reasoningChunks },
  };
  const whole = { id, object: "response", created_at: 1764661832, status: "completed", model: body.model, output: [reasoning, message], usage };
  if (!body.stream) {
    const text = JSON.stringify(whole);
    response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) }).end(text);
    return;
  }
  let seq = 0;
  const event = (type, fields) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...fields })}\n\n`;
  let out = event("response.created", { response: { ...whole, status: "in_progress", output: [], usage: null } });
  out += event("response.output_item.added", { output_index: 0, item: { ...reasoning, summary: [], encrypted_content: undefined } });
  out += event("response.reasoning_summary_part.added", { item_id: reasoning.id, output_index: 0, summary_index: 0, part: { type: "summary_text", text: "" } });
  for (const delta of summary) out += event("response.reasoning_summary_text.delta", { item_id: reasoning.id, output_index: 0, summary_index: 0, delta });
  out += event("response.reasoning_summary_text.done", { item_id: reasoning.id, output_index: 0, summary_index: 0, text: summary.join("") });
  out += event("response.output_item.done", { output_index: 0, item: reasoning });
  out += event("response.output_item.added", { output_index: 1, item: { ...message, content: [], status: "in_progress" } });
  for (const delta of words) out += event("response.output_text.delta", { item_id: message.id, output_index: 1, content_index: 0, delta, logprobs: [] });
  out += event("response.output_text.done", { item_id: message.id, output_index: 1, content_index: 0, text: words.join(""), logprobs: [] });
  out += event("response.output_item.done", { output_index: 1, item: message });
  out += event("response.completed", { response: whole });
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" }).end(out);
}

function problemOf(body, input) {
  if (body.store !== false) return "bench: store must be false";
  if (!Array.isArray(body.include) || !body.include.includes("reasoning.encrypted_content")) return "bench: include must ask for reasoning.encrypted_content";
  for (const item of input)
    if (item.type === "reasoning" && item.encrypted_content !== BLOB) return `bench: reasoning item ${item.id} came back without its blob`;
  return undefined;
}

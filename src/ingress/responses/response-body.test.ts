import { expect, test } from "vitest";
import type { JsonObject } from "../../providers/contract.js";
import type { ResponseIdentity, ResponseOutcome } from "./final-object.js";
import type { ResponsesRequest } from "./request.js";
import { ResponseBody } from "./response-body.js";
import { RecentEchoes } from "./recent-echoes.js";

const plain: ResponsesRequest = { model: "m", input: "hi" };
const agent: ResponsesRequest = {
  model: "m",
  input: [],
  instructions: 'Be brief. "Quoted", \\ backslash, \u2028 and é, 🙂',
  tools: [
    {
      type: "function",
      name: "exec",
      description: "Runs\na command",
      strict: false,
      parameters: { type: "object", properties: { output: { type: "string" }, usage: {} } },
    },
    { type: "namespace", name: "fs", tools: [{ type: "function", name: "read" }] },
    { type: "web_search" },
    { type: "image_generation" },
  ],
  tool_choice: { type: "function", name: "exec" },
  parallel_tool_calls: false,
  temperature: 0.2,
  top_p: 0.5,
  max_output_tokens: 1000,
  previous_response_id: "resp_1",
  prompt_cache_key: "k",
  safety_identifier: "s",
  reasoning: { effort: "high", summary: "auto" },
  text: { format: { type: "json_schema", name: "x", schema: { type: "object" } }, verbosity: "low" },
  metadata: { "1": "numeric key", output: "a member named like the outcome's", usage: "too" },
  user: "u",
  store: false,
  truncation: "auto",
};

function identity(request: ResponsesRequest, extra: Partial<ResponseIdentity> = {}): ResponseIdentity {
  return { id: "resp_x", createdAt: 1_700_000_000, model: "m", request, conversationId: null, ...extra };
}

const output: JsonObject[] = [
  { id: "rs_1", type: "reasoning", status: "completed", summary: [{ type: "summary_text", text: 'plan "it"' }], encrypted_content: "cd1.abc" },
  { id: "msg_1", type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text: "done ✓", annotations: [], logprobs: [] }] },
];
const outcomes: ResponseOutcome[] = [
  { status: "in_progress", output: [] },
  {
    status: "completed",
    output,
    usage: { prompt_tokens: 10, completion_tokens: 5, completion_tokens_details: { reasoning_tokens: 3 } },
    completedAt: 1_700_000_001,
  },
  { status: "incomplete", output, usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }, incompleteReason: "max_output_tokens" },
  { status: "failed", output: output.slice(0, 1), error: { code: "upstream_error", message: "it broke" } },
];

test("the JSON of a Response is JSON.stringify of its object, for every outcome of one response in turn (the echoed text is reused)", () => {
  for (const id of [identity(plain), identity(agent, { toolsOmitted: ["image_generation"] }), identity(agent, { conversationId: "conv_1" })]) {
    const body = new ResponseBody(id);
    for (const outcome of [...outcomes, ...outcomes]) expect(body.json(outcome)).toBe(JSON.stringify(body.object(outcome)));
  }
});

test("the echoed members are the same text in the first and the last event of a stream", () => {
  const body = new ResponseBody(identity(agent));
  const opening = JSON.parse(body.json(outcomes[0]!)) as JsonObject;
  const last = JSON.parse(body.json(outcomes[1]!)) as JsonObject;
  expect({ ...last, completed_at: null, status: "in_progress", output: [], usage: null }).toEqual(opening);
});

test("with the echoes of requests before it, a Response's JSON is still JSON.stringify of its object", () => {
  const recent = new RecentEchoes();
  const requests = [agent, { ...agent, tools: agent.tools?.slice(0, 2) }, plain, agent, { ...agent, metadata: { other: "x".repeat(2000) } }, agent];
  for (const request of requests)
    for (const extra of [{}, { conversationId: "conv_1" }, { toolsOmitted: ["web_search"] }]) {
      const body = new ResponseBody(identity(request, extra), recent);
      for (const outcome of outcomes) expect(body.json(outcome)).toBe(JSON.stringify(body.object(outcome)));
    }
});

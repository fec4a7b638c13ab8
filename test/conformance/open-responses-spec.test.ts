import { afterAll, afterEach, beforeAll, expect, test } from "vitest";
import { eventProblems, responseProblems } from "../support/open-responses.js";
import { startConformance, MODELS, type ConformanceSetup } from "./harness.js";
import { checkResponseStream, parseEvents } from "./responses-order.js";

/**
 * The Open Responses specification (SPEC §13.4): the harness checks every
 * answer of these requests against the vendored schemas after each test;
 * the tests here add the shapes the other suites do not reach.
 */
let setup: ConformanceSetup;
beforeAll(async () => {
  setup = await startConformance();
});
afterAll(() => setup?.stop());
afterEach(() => setup?.spec.verify({ expectSome: true }));

const WEATHER = { type: "function", name: "weather", parameters: { type: "object", properties: { location: { type: "string" } }, required: ["location"] } };

test("the validator is not vacuous: a response without completed_at, or with a null temperature, is rejected", async () => {
  const body = (await (await setup.gateway.post("/v1/responses", { model: "demo", input: "hi" })).json()) as Record<string, unknown>;
  expect(responseProblems(body)).toEqual([]);
  const { completed_at: _dropped, ...withoutCompletedAt } = body;
  expect(responseProblems(withoutCompletedAt).join("\n")).toMatch(/completed_at/);
  expect(responseProblems({ ...body, temperature: null }).join("\n")).toMatch(/temperature/);
  expect(eventProblems({ type: "response.made_up", sequence_number: 0 })).not.toEqual([]);
});

test.each(MODELS)("%s: settings echo what the request asked, defaults where it asked nothing; completed_at once completed", async (model) => {
  const asked = await setup.gateway.post("/v1/responses", {
    model,
    input: "How many r's are in strawberry?",
    temperature: 0.2,
    top_p: 0.9,
    presence_penalty: 0.5,
    frequency_penalty: -0.5,
    tools: [{ ...WEATHER, strict: true }],
    tool_choice: "none",
  });
  const body = (await asked.json()) as Record<string, unknown>;
  expect(body).toMatchObject({
    temperature: 0.2,
    top_p: 0.9,
    presence_penalty: 0.5,
    frequency_penalty: -0.5,
    tool_choice: "none",
    tools: [{ type: "function", name: "weather", strict: true, description: null }],
  });
  expect(body.completed_at).toBeGreaterThanOrEqual(body.created_at as number);
  const upstream = setup.upstream.requests[setup.upstream.requests.length - 1]!;
  if (model === "deepseek-reasoner") expect(upstream).toMatchObject({ temperature: 0.2, top_p: 0.9, presence_penalty: 0.5, frequency_penalty: -0.5 });

  const defaults = (await (await setup.gateway.post("/v1/responses", { model, input: "hi", tools: [WEATHER] })).json()) as Record<string, unknown>;
  expect(defaults).toMatchObject({
    temperature: 1,
    top_p: 1,
    presence_penalty: 0,
    frequency_penalty: 0,
    truncation: "disabled",
    tools: [{ strict: null, parameters: WEATHER.parameters }],
  });
});

test.each(MODELS)("%s streamed: created and in_progress first, in_progress and incomplete responses carry no completed_at", async (model) => {
  const events = parseEvents(
    await (await setup.gateway.post("/v1/responses", { model, input: "What is the weather in Paris?", tools: [WEATHER], stream: true })).text(),
  );
  const final = checkResponseStream(events);
  expect(events.slice(0, 2).map((event) => (event.data.response as { status: string }).status)).toEqual(["in_progress", "in_progress"]);
  expect((events[1]!.data.response as { completed_at: unknown }).completed_at).toBeNull();
  expect(final.completed_at).toEqual(expect.any(Number));
});

test.each(MODELS)(
  "%s with include reasoning.encrypted_content, store false: every reasoning item carries it, streamed in spec order, and it is accepted back",
  async (model) => {
    const ask = { model, input: "What is the weather in Paris?", tools: [WEATHER], store: false, include: ["reasoning.encrypted_content"] };
    const whole = (await (await setup.gateway.post("/v1/responses", ask)).json()) as { output: Record<string, unknown>[] };
    const events = parseEvents(await (await setup.gateway.post("/v1/responses", { ...ask, stream: true })).text());
    const final = checkResponseStream(events) as { output: Record<string, unknown>[] };
    for (const output of [whole.output, final.output]) {
      const reasoning = output.filter((item) => item.type === "reasoning");
      expect(reasoning.length).toBeGreaterThan(0);
      for (const item of reasoning) expect(item.encrypted_content).toMatch(/^cd1\./);
    }
    const done = events.filter((event) => event.data.type === "response.output_item.done").map((event) => event.data.item as Record<string, unknown>);
    expect(done).toEqual(final.output);
    const back = await setup.gateway.post("/v1/responses", {
      ...ask,
      input: [{ role: "user", content: ask.input }, ...whole.output, { role: "user", content: "Thanks." }],
    });
    expect(back.status).toBe(200);
  },
);

test("an incomplete response has completed_at null", async () => {
  const body = (await (await setup.gateway.post("/v1/responses", { model: "deepseek-reasoner", input: "FINISH_LENGTH" })).json()) as Record<string, unknown>;
  expect(body).toMatchObject({ status: "incomplete", completed_at: null });
});

test("file and image input, GET of the stored response, and a conversation, all spec-shaped", async () => {
  const conversation = `conv_spec_${Date.now()}`;
  const first = await setup.gateway.post("/v1/responses", {
    model: "deepseek-reasoner",
    conversation,
    input: [
      {
        role: "user",
        content: [
          { type: "input_text", text: "What do these show?" },
          { type: "input_image", image_url: "data:image/png;base64,iVBORw0KGgo=", detail: "low" },
          { type: "input_file", filename: "notes.txt", file_data: "data:text/plain;base64,aGVsbG8=" },
        ],
      },
    ],
  });
  expect(first.status).toBe(200);
  const body = (await first.json()) as { id: string; conversation: { id: string } };
  expect(body.conversation).toEqual({ id: conversation });
  const content = setup.upstream.requests[setup.upstream.requests.length - 1]!.messages as { content: unknown }[];
  expect(content[0]!.content).toEqual([
    { type: "text", text: "What do these show?" },
    { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=", detail: "low" } },
    { type: "file", file: { file_data: "data:text/plain;base64,aGVsbG8=", filename: "notes.txt" } },
  ]);
  expect((await setup.gateway.fetch(`/v1/responses/${body.id}`)).status).toBe(200);
  const next = await setup.gateway.post("/v1/responses", { model: "deepseek-reasoner", conversation, input: "And the second?", stream: true });
  expect(checkResponseStream(parseEvents(await next.text()))).toMatchObject({ status: "completed", conversation: { id: conversation } });
});

test("errors are spec-shaped too: bad input, unknown response, upstream 400, a stream cut mid-way", async () => {
  expect((await setup.gateway.post("/v1/responses", { model: "demo", input: "x", temperature: "hot" })).status).toBe(400);
  expect((await setup.gateway.fetch("/v1/responses/resp_nothing")).status).toBe(404);
  expect((await setup.gateway.post("/v1/responses", { model: "deepseek-reasoner", input: "FAIL_400" })).status).toBe(400);
  const cut = parseEvents(await (await setup.gateway.post("/v1/responses", { model: "deepseek-reasoner", input: "FAIL_MID_STREAM", stream: true })).text());
  expect(cut[cut.length - 1]!.data.type).toBe("response.failed");
});

test("GET /v1/responses/{id}/input_items lists the request's items, newest first by default, paged by after/limit", async () => {
  const first = (await (await setup.gateway.post("/v1/responses", { model: "demo", input: "How many r's are in strawberry?" })).json()) as {
    id: string;
    output: { id: string }[];
  };
  const single = (await (await setup.gateway.fetch(`/v1/responses/${first.id}/input_items`)).json()) as {
    object: string;
    data: Record<string, unknown>[];
    has_more: boolean;
  };
  expect(single).toMatchObject({
    object: "list",
    has_more: false,
    data: [{ type: "message", role: "user", status: "completed", content: [{ type: "input_text", text: "How many r's are in strawberry?" }] }],
  });
  expect(single.data[0]!.id).toMatch(/^msg_/);

  const input = [
    { role: "developer", content: "Be brief." },
    { type: "item_reference", id: first.output[1]!.id },
    {
      role: "user",
      content: [
        { type: "input_text", text: "Look:" },
        { type: "input_image", image_url: "https://example.com/a.png" },
      ],
    },
  ];
  const second = (await (await setup.gateway.post("/v1/responses", { model: "demo", input })).json()) as { id: string };
  const all = (await (await setup.gateway.fetch(`/v1/responses/${second.id}/input_items?order=asc`)).json()) as {
    data: Record<string, unknown>[];
    first_id: string;
    last_id: string;
  };
  expect(all.data.map((item) => item.role)).toEqual(["developer", "assistant", "user"]);
  expect(all.data[1]!.id).toBe(first.output[1]!.id); // the referenced item, listed as what it named
  expect((all.data[2]!.content as Record<string, unknown>[])[1]).toEqual({ type: "input_image", image_url: "https://example.com/a.png", detail: "auto" });
  expect([all.first_id, all.last_id]).toEqual([all.data[0]!.id, all.data[2]!.id]);

  const page = (await (await setup.gateway.fetch(`/v1/responses/${second.id}/input_items?limit=2`)).json()) as {
    data: { id: string }[];
    has_more: boolean;
    last_id: string;
  };
  expect(page.data.map((item) => item.id)).toEqual([all.data[2]!.id, all.data[1]!.id]);
  expect(page.has_more).toBe(true);
  const rest = (await (await setup.gateway.fetch(`/v1/responses/${second.id}/input_items?limit=2&after=${page.last_id}`)).json()) as {
    data: { id: string }[];
    has_more: boolean;
  };
  expect(rest).toMatchObject({ data: [{ id: all.data[0]!.id }], has_more: false });

  for (const [query, param] of [
    ["limit=0", "limit"],
    ["order=up", "order"],
  ] as const) {
    const bad = await setup.gateway.fetch(`/v1/responses/${second.id}/input_items?${query}`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { param: string } }).error.param).toBe(param);
  }
  expect((await setup.gateway.fetch("/v1/responses/resp_none/input_items")).status).toBe(404);
  await setup.gateway.fetch(`/v1/responses/${second.id}`, { method: "DELETE" });
  expect((await setup.gateway.fetch(`/v1/responses/${second.id}/input_items`)).status).toBe(404);
});

test("POST /v1/responses/{id}/cancel: a finished response is a 400 saying why, an unknown one a 404", async () => {
  const done = (await (await setup.gateway.post("/v1/responses", { model: "demo", input: "hi" })).json()) as { id: string };
  const cancelled = await setup.gateway.post(`/v1/responses/${done.id}/cancel`, {});
  expect(cancelled.status).toBe(400);
  expect(((await cancelled.json()) as { error: { message: string } }).error.message).toMatch(/background/);
  expect((await setup.gateway.post("/v1/responses/resp_none/cancel", {})).status).toBe(404);
});

test.each([
  [{ tools: [{ type: "web_search" }] }, "tools[0].type", /web_search.*not supported/],
  [{ tools: [{ type: "file_search", vector_store_ids: ["vs_1"] }] }, "tools[0].type", /file_search.*not supported/],
  [{ background: true }, "background", /background/],
])("what carrierd does not run is a spec-shaped 400: %j", async (extra, param, message) => {
  const response = await setup.gateway.post("/v1/responses", { model: "demo", input: "hi", ...extra });
  expect(response.status).toBe(400);
  const { error } = (await response.json()) as { error: { param: string; message: string } };
  expect(error.param).toBe(param);
  expect(error.message).toMatch(message);
});

test("/v1/capabilities says what of the spec is served", async () => {
  await setup.gateway.post("/v1/responses", { model: "demo", input: "hi" });
  const capabilities = (await (await setup.gateway.fetch("/v1/capabilities")).json()) as {
    features: { responses: Record<string, unknown> };
    endpoints: string[];
  };
  expect(capabilities.features.responses).toMatchObject({
    open_responses_version: "2026-04-24",
    input_items: true,
    compact: true,
    background: false,
    hosted_tools: false,
    tools: ["function"],
    include: ["reasoning.encrypted_content"],
  });
  expect(capabilities.endpoints).toEqual(expect.arrayContaining(["/v1/responses/{id}/input_items", "/v1/responses/compact"]));
});

import { Agent, request } from "node:http";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { MAX_INPUT_ITEMS } from "../../src/ingress/input-rule.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { startOpenAIUpstream, type OpenAIUpstream } from "../support/openai-upstream.js";

/**
 * The three doors fuzzed: 10,000 bodies each, grown from a valid request by
 * seeded random mutations (a node replaced by any JSON value, a key dropped
 * or added, lists emptied or repeated, roles and block types from every
 * door's vocabulary, thinking blocks with forged signatures), sent to the
 * demo route and to an OpenAI-compatible upstream on loopback. No answer may
 * be a 5xx, nor a stream's error frame `internal_error`: bad input is a 4xx
 * in the shape of the door that was called. The seed of each door is fixed,
 * so a failure names a case that can be replayed.
 */
const CASES = Number(process.env.CARRIERD_FUZZ_CASES ?? 10_000);
const PARALLEL = 8;

let upstream: OpenAIUpstream;
let gateway: TestGateway;

beforeAll(async () => {
  upstream = await startOpenAIUpstream();
  gateway = await startTestGateway({
    routes: `version: 1
providers:
  demo: { plugin: demo }
  plain: { plugin: openai-compatible, base_url: "${upstream.baseUrl("plain")}" }
models:
  - { name: demo, provider: demo, model: demo-reasoner }
  - { name: "plain/*", provider: plain }
carriers:
  - match: {}
    fields: [reasoning_content]
`,
  });
});
afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
});

/** mulberry32: small, seeded, good enough to spread mutations. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = [
  "user",
  "assistant",
  "system",
  "developer",
  "tool",
  "function",
  "text",
  "image",
  "image_url",
  "document",
  "thinking",
  "redacted_thinking",
  "tool_use",
  "tool_result",
  "input_text",
  "output_text",
  "input_image",
  "message",
  "reasoning",
  "function_call",
  "function_call_output",
  "refusal",
  "summary_text",
  "encrypted_content",
  "signature",
  "content",
  "",
  "\u0000",
  "\ud800",
  "😀",
  "x".repeat(300),
  "demo",
  "plain/some-model",
  "no/such-model",
];

function pick<T>(random: () => number, list: readonly T[]): T {
  return list[Math.floor(random() * list.length)];
}

function anyValue(random: () => number, depth = 0): unknown {
  const roll = random();
  if (roll < 0.12) return null;
  if (roll < 0.22) return random() < 0.5;
  if (roll < 0.34) return pick(random, [0, -1, 1.5, 1e308, -1e308, 2 ** 53 + 1, 100_001, 0.1]);
  if (roll < 0.6) return pick(random, WORDS);
  if (roll < 0.8 || depth > 3) {
    const list: unknown[] = [];
    const length = pick(random, [0, 1, 2, 3]);
    for (let i = 0; i < length; i++) list.push(anyValue(random, depth + 1));
    return list;
  }
  const object: Record<string, unknown> = {};
  const keys = pick(random, [0, 1, 2, 3]);
  for (let i = 0; i < keys; i++) object[pick(random, WORDS)] = anyValue(random, depth + 1);
  return object;
}

/** Every container in `value` with its key, so a mutation can reach any depth. */
function slots(value: unknown, found: { holder: Record<string, unknown> | unknown[]; key: string | number }[] = []) {
  if (Array.isArray(value)) {
    value.forEach((item, index) => {
      found.push({ holder: value, key: index });
      slots(item, found);
    });
  } else if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      found.push({ holder: value as Record<string, unknown>, key });
      slots(item, found);
    }
  }
  return found;
}

function mutate(base: Record<string, unknown>, random: () => number): Record<string, unknown> {
  const body = structuredClone(base);
  const rounds = 1 + Math.floor(random() * 4);
  for (let round = 0; round < rounds; round++) {
    const all = slots(body);
    if (all.length === 0) break;
    const slot = pick(random, all);
    const operation = random();
    if (operation < 0.4) (slot.holder as Record<string | number, unknown>)[slot.key] = anyValue(random);
    else if (operation < 0.55) {
      if (Array.isArray(slot.holder)) slot.holder.splice(slot.key as number, 1);
      else delete slot.holder[slot.key as string];
    } else if (operation < 0.65) {
      const target = (slot.holder as Record<string | number, unknown>)[slot.key];
      if (target !== null && typeof target === "object" && !Array.isArray(target)) (target as Record<string, unknown>)[pick(random, WORDS)] = anyValue(random);
    } else if (operation < 0.75) {
      const target = (slot.holder as Record<string | number, unknown>)[slot.key];
      if (Array.isArray(target)) target.length = 0;
      else (slot.holder as Record<string | number, unknown>)[slot.key] = [];
    } else if (operation < 0.85) {
      const target = (slot.holder as Record<string | number, unknown>)[slot.key];
      if (Array.isArray(target) && target.length > 0) target.push(...structuredClone(target));
    } else (slot.holder as Record<string | number, unknown>)[slot.key] = pick(random, WORDS);
  }
  if (random() < 0.3) body.stream = random() < 0.7;
  if (random() < 0.2) body.model = pick(random, ["demo", "plain/fuzz-model", "no/such-model"]);
  return body;
}

const forged = "Ev" + "A".repeat(120);

const DOORS = {
  "/v1/chat/completions": {
    seed: 1,
    list: "messages",
    bases: [
      { model: "demo", messages: [{ role: "user", content: "What is 2 plus 2?" }] },
      {
        model: "plain/fuzz-model",
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: [{ type: "text", text: "Read the file." }] },
          {
            role: "assistant",
            content: null,
            reasoning_content: "I should read it.",
            tool_calls: [{ id: "call_1", type: "function", function: { name: "read", arguments: '{"path":"a"}' } }],
          },
          { role: "tool", tool_call_id: "call_1", content: "contents" },
        ],
        tools: [{ type: "function", function: { name: "read", parameters: { type: "object" } } }],
      },
    ],
  },
  "/v1/responses": {
    seed: 2,
    list: "input",
    bases: [
      { model: "demo", input: "What is 3 plus 3?" },
      {
        model: "plain/fuzz-model",
        instructions: "Be brief.",
        input: [
          { type: "message", role: "user", content: [{ type: "input_text", text: "Read the file." }] },
          { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "I should read it." }] },
          { type: "function_call", call_id: "call_1", name: "read", arguments: '{"path":"a"}' },
          { type: "function_call_output", call_id: "call_1", output: "contents" },
        ],
        tools: [{ type: "function", name: "read", parameters: { type: "object" } }],
      },
    ],
  },
  "/v1/messages": {
    seed: 3,
    list: "messages",
    bases: [
      { model: "demo", max_tokens: 256, messages: [{ role: "user", content: "What is 4 plus 4?" }] },
      {
        model: "plain/fuzz-model",
        max_tokens: 256,
        system: [{ type: "text", text: "Be brief." }],
        thinking: { type: "enabled", budget_tokens: 1024 },
        messages: [
          { role: "user", content: [{ type: "text", text: "Read the file." }] },
          {
            role: "assistant",
            content: [
              { type: "thinking", thinking: "I should read it.", signature: forged },
              { type: "tool_use", id: "toolu_1", name: "read", input: { path: "a" } },
            ],
          },
          { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "contents" }] },
        ],
        tools: [{ name: "read", input_schema: { type: "object" } }],
      },
    ],
  },
} as const;

interface Outcome {
  status: number;
  text: string;
}

/**
 * One POST on a kept-alive connection, through node:http: the same request on
 * the wire as fetch sends, at a fraction of fetch's CPU in this process, which
 * the gateway under test shares (30,000 of them).
 */
const agent = new Agent({ keepAlive: true, maxSockets: PARALLEL });
afterAll(() => agent.destroy());

function send(path: string, body: unknown): Promise<Outcome> {
  const payload = Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const sent = request(
      `${gateway.url}${path}`,
      {
        agent,
        method: "POST",
        headers: { authorization: `Bearer ${gateway.key}`, "content-type": "application/json", "content-length": payload.length },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
        response.on("error", reject);
      },
    );
    sent.on("error", reject);
    sent.end(payload);
  });
}

/** A 5xx, or a stream that reported the gateway's own failure. */
function isServerFailure(outcome: Outcome): boolean {
  return outcome.status >= 500 || /"(code|type)"\s*:\s*"(internal_error|api_error|server_error)"/.test(outcome.text);
}

describe.each(Object.entries(DOORS))("%s", (path, door) => {
  test("an empty list and one item past the cap are 400s in the door's shape", async () => {
    const base = door.bases[0] as Record<string, unknown>;
    const empty = await send(path, { ...base, [door.list]: [] });
    expect(empty.status, empty.text).toBe(400);
    expect(empty.text).toContain(`'${door.list}' must not be empty`);
    const past = await send(path, { ...base, [door.list]: Array.from({ length: MAX_INPUT_ITEMS + 1 }, () => ({ role: "user", content: "hi" })) });
    expect(past.status, past.text.slice(0, 200)).toBe(400);
    expect(past.text).toContain(`at most ${MAX_INPUT_ITEMS} items`);
  }, 60_000);

  test(`${CASES} mutated bodies: no 5xx`, async () => {
    const random = prng(door.seed);
    const cases = Array.from({ length: CASES }, (_, index) => ({
      index,
      body: mutate(door.bases[index % door.bases.length] as Record<string, unknown>, random),
    }));
    const statuses = new Map<number, number>();
    const failures: string[] = [];
    let next = 0;
    const worker = async () => {
      while (next < cases.length) {
        const { index, body } = cases[next++];
        const outcome = await send(path, body);
        statuses.set(outcome.status, (statuses.get(outcome.status) ?? 0) + 1);
        if (isServerFailure(outcome) && failures.length < 5)
          failures.push(`case ${index}: ${outcome.status} ${outcome.text.slice(0, 300)}\n  body: ${JSON.stringify(body).slice(0, 600)}`);
      }
    };
    await Promise.all(Array.from({ length: PARALLEL }, worker));
    console.log(`${path}: ${CASES} cases, statuses ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}`);
    expect(failures, failures.join("\n")).toEqual([]);
    expect([...statuses.keys()].filter((status) => status >= 500)).toEqual([]);
  }, 600_000);
});

import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { ProviderConfig } from "../../src/providers/contract.js";
import { loadRoutesFile } from "../../src/routing/routes/load-routes.js";
import type { RouteTable } from "../../src/routing/routes/route-table.js";
import { WEATHER_TOOL } from "../support/family-routes.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { startOpenAIUpstream, type Flavor, type OpenAIUpstream } from "../support/openai-upstream.js";
import { ask, type Message } from "../support/stateless-client.js";

/**
 * The shipped routes.yaml's routes for the OpenAI-style hosts of 2026, each
 * run against the OpenAI chat emulator's flavour of its host (which records
 * the reasoning the host's template renders) through a client that keeps no
 * reasoning (docs/routes.md#the-shipped-table-and-why-each-route-exists). The
 * emulators listen on loopback, so each route is copied from the shipped
 * table as it resolves for the real host and model, and matched by provider.
 * Two questions, each a tool loop: every request is accepted on the first
 * try, and on the last one the model still sees all the reasoning it wrote
 * (the host's preserve switch went with every request, and the reasoning
 * under the name the host reads).
 */
type Host = "minimax" | "kimi-k2.6" | "glm" | "qwen3.6" | "fireworks" | "vllm" | "vllm-legacy" | "sglang" | "llamacpp" | "ollama";
const CASES: { host: Host; flavor: Flavor; realHost: string; model: string }[] = [
  { host: "minimax", flavor: "minimax", realHost: "api.minimax.io", model: "MiniMax-M2.7" },
  { host: "kimi-k2.6", flavor: "kimi", realHost: "api.moonshot.ai", model: "kimi-k2.6" },
  { host: "glm", flavor: "zai", realHost: "api.z.ai", model: "glm-5" },
  { host: "qwen3.6", flavor: "dashscope", realHost: "dashscope-intl.aliyuncs.com", model: "qwen3.6-plus" },
  { host: "fireworks", flavor: "fireworks", realHost: "api.fireworks.ai", model: "kimi-k2p6" },
  { host: "vllm", flavor: "vllm", realHost: "127.0.0.1", model: "qwen3" },
  { host: "vllm-legacy", flavor: "vllm-legacy", realHost: "192.168.1.40", model: "qwen3" },
  { host: "sglang", flavor: "sglang", realHost: "10.0.0.7", model: "qwen3" },
  { host: "llamacpp", flavor: "llamacpp", realHost: "localhost", model: "qwen3" },
  { host: "ollama", flavor: "ollama", realHost: "127.0.0.1", model: "qwen3" },
];
const flavorOf = (host: Host): Flavor => CASES.find((entry) => entry.host === host)!.flavor;

let table: RouteTable;
let hosts: OpenAIUpstream;
/** Every reasoning text the host issued so far, in order. */
const issued = (host: Host): string[] => hosts.requestsFor(flavorOf(host)).flatMap((request) => (request.reasoning === undefined ? [] : [request.reasoning]));
beforeAll(async () => {
  const loaded = await loadRoutesFile(fileURLToPath(new URL("../../routes.yaml", import.meta.url)), {
    knownPlugins: new Set(["demo", "openai-compatible", "openai-responses", "anthropic", "gemini", "bedrock", "copilot"]),
  });
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
  table = loaded.table;
  hosts = await startOpenAIUpstream();
});
afterAll(() => hosts?.close());

const provider = (host: string): ProviderConfig => ({ id: host, plugin: "openai-compatible", baseUrl: `https://${host}/v1`, host, headers: {} });

/** A routes.yaml whose provider per host carries the shipped route for its real host, less `drop` (a key of the route). */
function routesFor(drop?: "request_extra" | "must_echo"): string {
  const carriers = CASES.map(({ host, realHost, model }) => {
    const policy = table.policyFor(provider(realHost), model);
    const route: Record<string, unknown> = { match: { provider: host }, fields: policy.fields };
    if (policy.mustEcho && drop !== "must_echo") route.must_echo = true;
    if (policy.requestExtra && drop !== "request_extra") route.request_extra = policy.requestExtra;
    return `  - ${JSON.stringify(route)}`;
  });
  return `version: 1
providers:
${CASES.map(({ host }) => `  ${host}: { plugin: openai-compatible, base_url: "${hosts.baseUrl(flavorOf(host))}" }`).join("\n")}
models:
${CASES.map(({ host }) => `  - { name: "${host}/*", provider: ${host} }`).join("\n")}
carriers:
${carriers.join("\n")}
`;
}

/** Two questions, each a tool loop; the statuses of every turn. */
async function conversation(gateway: TestGateway, host: Host, model: string, stream: boolean): Promise<number[]> {
  const messages: Message[] = [];
  const statuses: number[] = [];
  for (const question of ["Weather in Florence?", "And tomorrow?"]) {
    messages.push({ role: "user", content: question });
    for (let step = 0; step < 2; step++) {
      const turn = await ask(gateway, { model: `${host}/${model}`, stream, tools: [WEATHER_TOOL], messages });
      statuses.push(turn.status);
      if (turn.status !== 200) return statuses;
      messages.push(turn.kept);
      for (const call of (turn.kept.tool_calls as { id: string }[] | undefined) ?? []) messages.push({ role: "tool", tool_call_id: call.id, content: "20 C" });
    }
  }
  return statuses;
}

describe("the shipped routes, through the daemon", () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway({ routes: routesFor() });
  });
  afterAll(() => gateway?.stop());

  describe.each([false, true])("stream=%s", (stream) => {
    test.each(CASES)("$host: every request accepted first time, and the model still sees all its reasoning", async ({ host, model }) => {
      const before = hosts.received.length;
      const issuedBefore = issued(host).length;
      expect(await conversation(gateway, host, model, stream)).toEqual([200, 200, 200, 200]);
      const requests = hosts.received.slice(before);
      expect(requests.map((request) => request.status)).toEqual([200, 200, 200, 200]);
      const mine = issued(host).slice(issuedBefore);
      expect(requests.at(-1)!.seen).toEqual(mine.slice(0, 3));
    });
  });

  test("the switches go as each host spells them", () => {
    const last = (host: Host) => hosts.requestsFor(flavorOf(host)).at(-1)!.body;
    expect(last("kimi-k2.6").thinking).toEqual({ type: "enabled", keep: "all" });
    expect(last("glm").thinking).toEqual({ type: "enabled", clear_thinking: false });
    expect(last("qwen3.6").preserve_thinking).toBe(true);
    expect(last("fireworks").reasoning_history).toBe("preserved");
    expect(last("minimax").reasoning_split).toBe(true);
    for (const host of ["vllm", "sglang", "llamacpp", "ollama"] as const) {
      const assistants = last(host).messages.filter((message) => message.role === "assistant");
      // a local server gets both names: each reads its own and ignores the other
      for (const message of assistants) expect(Object.keys(message)).toEqual(expect.arrayContaining(["reasoning_content", "reasoning"]));
    }
  });
});

describe("the emulators are strict: without the shipped route's switch a host forgets", () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway({ routes: routesFor("request_extra") });
  });
  afterAll(() => gateway?.stop());

  test.each(CASES.filter(({ host }) => ["kimi-k2.6", "glm", "qwen3.6", "fireworks", "minimax"].includes(host)))(
    "$host without its switch forgets the earlier turns' reasoning",
    async ({ host, model }) => {
      const before = hosts.received.length;
      const issuedBefore = issued(host).length;
      expect(await conversation(gateway, host, model, false)).toEqual([200, 200, 200, 200]);
      const mine = issued(host).slice(issuedBefore);
      // MiniMax without reasoning_split writes its reasoning inline, which carrierd takes out of the content into
      // reasoning_content, a field MiniMax does not read: it forgets even the current loop's
      expect(hosts.received.at(-1)!.seen).toEqual(host === "minimax" ? [] : [mine[2]]);
      expect(hosts.received.slice(before).every((request) => request.flavor === flavorOf(host))).toBe(true);
    },
  );
});

test("Kimi refuses a tool turn without its reasoning, with Kimi's text (the must-echo route prevents it)", async () => {
  const gateway = await startTestGateway({ routes: routesFor("must_echo") });
  try {
    const messages: Message[] = [
      { role: "user", content: "Weather?" },
      { role: "assistant", content: null, tool_calls: [{ id: "call_elsewhere", type: "function", function: { name: "weather", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "call_elsewhere", content: "20 C" },
    ];
    const turn = await ask(gateway, { model: "kimi-k2.6/kimi-k2.6", tools: [WEATHER_TOOL], messages });
    expect(turn.status).toBe(400);
    expect(turn.error?.message).toContain("thinking is enabled but reasoning_content is missing in assistant tool call message at index 1");
  } finally {
    await gateway.stop();
  }
});

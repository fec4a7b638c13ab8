import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, test, vi } from "vitest";
import { startTestGateway, storageOf, type TestGateway } from "../support/gateway.js";
import { startOpenAIUpstream, type OpenAIUpstream } from "../support/openai-upstream.js";
import { ask, assistantsOf, type Message } from "../support/stateless-client.js";

/**
 * A verdict outlives the process, rides along in the session's model config,
 * and yields to the operator: editing the route that covers it clears it.
 */

let upstream: OpenAIUpstream;
let home: string;
beforeAll(async () => {
  upstream = await startOpenAIUpstream();
  home = mkdtempSync(join(tmpdir(), "carrierd-verdicts-"));
});
afterAll(async () => {
  await upstream.close();
  rmSync(home, { recursive: true, force: true });
});

function routes(cerebrasFields: string, comment = ""): string {
  return `version: 1
providers:
  cerebras: { plugin: openai-compatible, base_url: "${upstream.baseUrl("cerebras")}" }
  local:    { plugin: openai-compatible, base_url: "${upstream.baseUrl("local")}" }
models:
  - { name: "cerebras/*", provider: cerebras }
  - { name: "local/*",    provider: local }
carriers:
  # ${comment}
  - match: { provider: cerebras }
    fields: ${cerebrasFields}
  - match: {}
    fields: [reasoning_content, reasoning]
`;
}

async function conversation(
  gateway: TestGateway,
  model: string,
  headers: Record<string, string> = {},
): Promise<{ requests: number; status: number; sessionId: string | null }> {
  const flavor = model.split("/")[0]!;
  const history: Message[] = [{ role: "user", content: `hi ${Math.random()}` }];
  const first = await ask(gateway, { model, messages: history }, headers);
  history.push(first.kept, { role: "user", content: "more" });
  const before = upstream.requestsFor(flavor).length;
  const second = await ask(gateway, { model, messages: history }, headers);
  return { requests: upstream.requestsFor(flavor).length - before, status: second.status, sessionId: second.sessionId };
}

test("verdicts survive a restart; the session keeps its own copy; a route edit clears what it covers, and says so", async () => {
  const log = {
    info: vi.fn(),
    warn: vi.fn(),
    debug: vi.fn(),
    error: vi.fn(),
    trace: vi.fn(),
    fatal: vi.fn(),
    child: () => log,
    level: "info",
    isLevelEnabled: () => true,
  };
  let gateway = await startTestGateway({ routes: routes("[reasoning_content]"), home });
  const first = await conversation(gateway, "cerebras/gpt-oss-120b", { "x-session-id": "resume-me" });
  expect(first).toMatchObject({ requests: 2, status: 200 });
  expect((await storageOf(gateway).sessions.show("resume-me"))!.modelConfig.rejected_carriers).toEqual([
    ["cerebras", "127.0.0.1", "gpt-oss-120b", ["reasoning_content"]],
  ]);
  await gateway.stop();

  gateway = await startTestGateway({ routes: routes("[reasoning_content]"), home, log: log as never });
  expect((await conversation(gateway, "cerebras/gpt-oss-120b")).requests).toBe(1);
  // resuming the session after a restart: still omitted, still one request
  expect((await conversation(gateway, "cerebras/gpt-oss-120b", { "x-session-id": "resume-me" })).requests).toBe(1);

  // an edit elsewhere in the file (a comment) leaves the covering route as it was: the verdict stays
  writeFileSync(gateway.routesPath, routes("[reasoning_content]", "only a comment changed"));
  await gateway.reloadRoutes();
  expect(await storageOf(gateway).verdicts.list()).toHaveLength(1);

  // the operator edits the covering route: the verdict is cleared, logged, and the field is sent again
  writeFileSync(gateway.routesPath, routes("[reasoning, reasoning_content]"));
  await gateway.reloadRoutes();
  expect(await storageOf(gateway).verdicts.list()).toEqual([]);
  expect((await storageOf(gateway).sessions.show("resume-me"))!.modelConfig.rejected_carriers).toEqual([]);
  expect(log.info).toHaveBeenCalledWith(
    expect.objectContaining({ cleared: [{ provider: "cerebras", host: "127.0.0.1", model: "gpt-oss-120b", field: "reasoning_content" }] }),
    expect.stringContaining("clears 1 verdict"),
  );
  const before = upstream.requestsFor("cerebras").length;
  const after = await conversation(gateway, "cerebras/gpt-oss-120b");
  // reasoning_content is named again → widened to both sent fields; the retry carries `reasoning` no more either
  expect(after.requests).toBe(2);
  expect(assistantsOf(upstream.requestsFor("cerebras")[before + 1]!.body)[0]).toHaveProperty("reasoning_content");
  await gateway.stop();
});

import "reflect-metadata";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import { sessionsCommand } from "../../src/cli/commands/sessions.js";
import { familyRoutes } from "../support/family-routes.js";
import { afterGatewayCommits, startTestGateway, storageOf, type TestGateway } from "../support/gateway.js";
import { startOpenAIUpstream, type OpenAIUpstream } from "../support/openai-upstream.js";
import { startPgCluster, type PgCluster } from "../support/pg-cluster.js";
import { announceSkipped, pgSkipReason } from "../support/postgres.js";
import { addKey, bearer } from "./keys-support.js";

announceSkipped("test/keys/session-ownership.test.ts", 6);

/**
 * A session belongs to the key that created it (docs/sessions-and-replay.md,
 * "Whose a session is"): key B naming key A's session by X-Session-Id, by a
 * conversation name or by a response id never writes into it and learns
 * nothing of it — its answer is the one a name that exists nowhere gets —
 * and A's later re-rendered turns still get their reasoning back. On both
 * backends.
 */
type Message = { role: string; content: string; reasoning_content?: string };

interface Backend {
  readonly gateway: TestGateway;
  /** `--store` for the CLI, when not the gateway's home. */
  readonly store: string | undefined;
  stop(): Promise<void>;
}

const BACKENDS: Record<string, (routes: string) => Promise<Backend>> = {
  sqlite: async (routes) => {
    const gateway = await startTestGateway({ routes });
    return { gateway, store: undefined, stop: () => gateway.stop() };
  },
  postgres: async (routes) => {
    const cluster: PgCluster = await startPgCluster(1, { routes });
    return { gateway: cluster.gateways[0]!, store: cluster.store.url, stop: () => cluster.stop() };
  },
};

describe.each(Object.keys(BACKENDS))("sessions are owned: %s", (backendName) => {
  const skip = backendName === "postgres" && pgSkipReason() !== undefined;
  let upstream: OpenAIUpstream;
  let backend: Backend;
  let a: string;
  let b: string;

  beforeAll(async () => {
    if (skip) return;
    upstream = await startOpenAIUpstream();
    backend = await BACKENDS[backendName]!(familyRoutes(upstream));
    a = await addKey(backend.gateway, "client-a");
    b = await addKey(backend.gateway, "client-b");
  });
  afterAll(async () => {
    await backend?.stop();
    await upstream?.close();
  });

  const MODEL = "zai/glm-4.6";
  const chat = async (secret: string, messages: Message[], session?: string) => {
    const response = await fetch(`${backend.gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { ...bearer(secret), "content-type": "application/json", ...(session ? { "x-session-id": session } : {}) },
      body: JSON.stringify({ model: MODEL, messages }),
    });
    const body = (await response.json()) as { choices: { message: { content: string; reasoning_content?: string } }[] };
    const sent = upstream.requestsFor("zai").at(-1)!.body.messages;
    return { status: response.status, session: response.headers.get("x-session-id"), message: body.choices[0]!.message, sent };
  };
  /** What a frontend that re-renders answers keeps of one: other text (no fingerprint matches it), no reasoning. */
  const rerendered = (content: string): Message => ({ role: "assistant", content: `**${content}**` });
  const reasoningSent = (sent: Record<string, unknown>[]) =>
    sent.filter((message) => message.role === "assistant").map((message) => message.reasoning_content ?? null);
  const scopeOf = async (name: string) => (await storageOf(backend.gateway).keys.list()).keys!.find((key) => key.name === name)!.dataScope;

  test.skipIf(skip)(
    "key B's X-Session-Id of key A's session: a session of B's own, answered as for a name that exists nowhere; A's re-rendered turns keep their reasoning",
    async () => {
      const u1 = { role: "user", content: "first question of A" };
      const first = await chat(a, [u1], "shared-name");
      expect([first.status, first.session]).toEqual([200, "shared-name"]);
      const r1 = first.message.reasoning_content!;
      expect(r1).toBeTruthy();

      // B names A's session, with a history whose assistant message position matching would place on A's turn 1
      const intruder = [{ role: "user", content: "B asks" }, rerendered("anything"), { role: "user", content: "and again" }];
      const byB = await chat(b, intruder, "shared-name");
      const nowhere = await chat(b, intruder, "never-used-name");
      expect([byB.status, byB.session]).toEqual([200, "shared-name"]);
      expect([nowhere.status, nowhere.session]).toEqual([200, "never-used-name"]);
      // nothing of A's went upstream for B: exactly what a name that exists nowhere gets
      expect(reasoningSent(byB.sent)).toEqual([null]);
      expect(reasoningSent(nowhere.sent)).toEqual(reasoningSent(byB.sent));

      const u2 = { role: "user", content: "second question of A" };
      const second = await chat(a, [u1, rerendered(first.message.content), u2], "shared-name");
      expect(reasoningSent(second.sent)).toEqual([r1]);
      // B writes into "its" shared-name once more, between A's turns
      await chat(b, [{ role: "user", content: "B again" }], "shared-name");

      // A's turns 1 and 2 both re-rendered: both found by position, both with their own reasoning
      const u3 = { role: "user", content: "third question of A" };
      const third = await chat(a, [u1, rerendered(first.message.content), u2, rerendered(second.message.content), u3], "shared-name");
      expect(reasoningSent(third.sent)).toEqual([r1, second.message.reasoning_content]);

      // two sessions of one name: A's holds A's three turns, B's its own
      await afterGatewayCommits(backend.gateway);
      const sessions = storageOf(backend.gateway).sessions;
      const ofA = await sessions.show(`shared-name~${await scopeOf("client-a")}`);
      const ofB = await sessions.show(`shared-name~${await scopeOf("client-b")}`);
      expect(ofA?.turnList.map((turn) => turn.content)).toEqual([first.message.content, second.message.content, third.message.content]);
      expect(ofB?.turns).toBe(2);
      // and the owner key's shared-name is a third, its own
      expect(await sessions.show("shared-name")).toBeUndefined();
      const owner = await chat(backend.gateway.key, [u1, rerendered(first.message.content), u2], "shared-name");
      expect([owner.status, owner.session]).toEqual([200, "shared-name"]);
      expect(reasoningSent(owner.sent)).toEqual([null]);
      expect(await sessions.show("shared-name")).toBeDefined();
    },
  );

  test.skipIf(skip)("Responses: X-Session-Id, conversation and previous_response_id of key A's reach nothing of A's for key B", async () => {
    const respond = async (secret: string, body: Record<string, unknown>, session?: string) => {
      const response = await fetch(`${backend.gateway.url}/v1/responses`, {
        method: "POST",
        headers: { ...bearer(secret), "content-type": "application/json", ...(session ? { "x-session-id": session } : {}) },
        body: JSON.stringify({ model: MODEL, ...body }),
      });
      const json = (await response.json()) as { id: string; conversation?: { id: string }; error?: { code: string } };
      return { status: response.status, session: response.headers.get("x-session-id"), json, sent: upstream.requestsFor("zai").at(-1)!.body.messages };
    };
    const ofA = await respond(a, { input: "A opens a conversation", conversation: "conv-of-a" }, "responses-session");
    expect([ofA.status, ofA.session, ofA.json.conversation]).toEqual([200, "responses-session", { id: "conv-of-a" }]);
    // B's conversation of that name is B's own, new: nothing of A's history goes upstream
    const byB = await respond(b, { input: "B continues?", conversation: "conv-of-a" });
    const fresh = await respond(b, { input: "B continues?", conversation: "conv-nowhere" });
    expect([byB.status, byB.json.conversation]).toEqual([200, { id: "conv-of-a" }]);
    expect(byB.sent.map((message) => message.content)).toEqual(fresh.sent.map((message) => message.content));
    expect(JSON.stringify(byB.sent)).not.toContain("A opens");
    // A's conversation goes on as A's, without B's turn
    const again = await respond(a, { input: "A goes on", conversation: "conv-of-a" });
    expect(JSON.stringify(again.sent)).toContain("A opens");
    expect(JSON.stringify(again.sent)).not.toContain("B continues");
    // a response id of A's is, for B, a response that does not exist
    const previous = await respond(b, { input: "x", previous_response_id: ofA.json.id });
    const missing = await respond(b, { input: "x", previous_response_id: "resp_doesnotexist" });
    expect([previous.status, previous.json.error?.code]).toEqual([missing.status, missing.json.error?.code]);
    expect(previous.status).toBe(404);
    const compact = async (id: string) =>
      (
        await fetch(`${backend.gateway.url}/v1/responses/compact`, {
          method: "POST",
          headers: { ...bearer(b), "content-type": "application/json" },
          body: JSON.stringify({ model: MODEL, previous_response_id: id }),
        })
      ).status;
    expect(await compact(ofA.json.id)).toBe(await compact("resp_doesnotexist"));
  });

  test.skipIf(skip)("sessions branch and rm through the CLI: a branch of A's session is A's; B naming it reaches a session of its own", async () => {
    await chat(a, [{ role: "user", content: "to be branched" }], "branch-me");
    await afterGatewayCommits(backend.gateway);
    const stored = `branch-me~${await scopeOf("client-a")}`;
    const branched = await sessionsCli(backend, ["branch", stored]);
    expect(branched.exitCode).toBeUndefined();
    const branchId = branched.out.trim();
    expect(branchId).toMatch(new RegExp(`^sess_[0-9a-f]{24}~${await scopeOf("client-a")}$`));
    const name = branchId.slice(0, branchId.indexOf("~"));
    // A continues its branch by name; B's request with that name starts B's own
    const byA = await chat(a, [{ role: "user", content: "to be branched" }, rerendered("x"), { role: "user", content: "on" }], name);
    expect(reasoningSent(byA.sent)[0]).toBeTruthy();
    const byB = await chat(b, [{ role: "user", content: "to be branched" }, rerendered("x"), { role: "user", content: "on" }], name);
    expect(reasoningSent(byB.sent)).toEqual([null]);
    expect((await sessionsCli(backend, ["rm", stored])).out).toContain(`removed ${stored}`);
    // the bare name is no one's session: the CLI says so, as for any name that exists nowhere
    expect((await sessionsCli(backend, ["rm", "branch-me"])).exitCode).toBe(1);
  });
});

/** `carrierd sessions …` in process, on the backend's store. */
async function sessionsCli(backend: Backend, argv: string[]): Promise<{ out: string; exitCode: number | undefined }> {
  await afterGatewayCommits(backend.gateway);
  const printed: string[] = [];
  const logSpy = vi.spyOn(console, "log").mockImplementation((...args) => void printed.push(args.join(" ")));
  const errorSpy = vi.spyOn(console, "error").mockImplementation(() => {});
  const previous = process.exitCode;
  process.exitCode = undefined;
  try {
    const yargs = (await import("yargs")).default;
    const where = backend.store ? ["--store", backend.store] : ["--home", backend.gateway.home];
    await yargs(["sessions", ...argv, ...where])
      .option("home", { type: "string", global: true })
      .option("store", { type: "string", global: true })
      .command(sessionsCommand)
      .strict()
      .fail(false)
      .parseAsync();
    return { out: printed.join("\n"), exitCode: process.exitCode as number | undefined };
  } finally {
    process.exitCode = previous;
    logSpy.mockRestore();
    errorSpy.mockRestore();
  }
}

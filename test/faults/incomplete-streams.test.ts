import "reflect-metadata";
import { afterAll, beforeAll, expect, test } from "vitest";
import { readSse, startTestGateway, storageOf, type TestGateway } from "../support/gateway.js";
import { startFaultInjector, type FaultInjector } from "../support/fault-injector.js";
import { faultRoutes } from "./routes.js";

// An upstream stream that ends without its terminal marker, or with a chunk that cannot be read, is an incomplete turn.
let upstream: FaultInjector;
let gateway: TestGateway;

beforeAll(async () => {
  upstream = await startFaultInjector();
  gateway = await startTestGateway({ routes: faultRoutes(upstream.baseUrl()) });
});

afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
});

type Chunk = { choices?: { delta?: Record<string, unknown>; finish_reason: string | null }[]; error?: { code: string; message: string; type: string } };

async function storedTurns(sessionId: string): Promise<number> {
  return (await storageOf(gateway).sessions.show(sessionId))?.turnList.length ?? 0;
}

async function streamChat(model: string, sessionId: string) {
  const response = await gateway.post(
    "/v1/chat/completions",
    { model, stream: true, messages: [{ role: "user", content: "2+2?" }] },
    { "x-session-id": sessionId },
  );
  expect(response.status).toBe(200);
  expect(response.headers.get("x-session-id")).toBe(sessionId);
  const { events, done } = await readSse(response);
  return { chunks: events as Chunk[], done };
}

test("a whole stream is stored as a complete turn (the control for the tests below)", async () => {
  const { chunks, done } = await streamChat("ok", "fault-ok");
  expect(done).toBe(true);
  expect(chunks.some((chunk) => chunk.error)).toBe(false);
  expect(chunks.at(-1)!.choices![0]!.finish_reason).toBe("stop");
  expect(await storedTurns("fault-ok")).toBe(1);
});

test("a stream that ends with no finish_reason and no [DONE] gets an error chunk before [DONE], no finish_reason, and is not stored", async () => {
  const { chunks, done } = await streamChat("cut", "fault-cut");
  expect(done).toBe(true);
  // what did arrive reached the client
  const text = chunks.map((chunk) => chunk.choices?.[0]?.delta?.content ?? "").join("");
  expect(text).toBe("The answer i");
  const last = chunks.at(-1)!;
  expect(last.error).toMatchObject({ code: "upstream_stream_truncated", type: "upstream_error" });
  expect(last.error!.message).toContain("incomplete");
  // carrierd never claims the answer finished
  expect(chunks.some((chunk) => chunk.choices?.[0]?.finish_reason)).toBe(false);
  expect(await storedTurns("fault-cut")).toBe(0);
});

test("a later turn does not get the cut-off thought replayed as a whole one", async () => {
  await streamChat("cut", "fault-cut-replay");
  const next = upstream.next("ok");
  const response = await gateway.post(
    "/v1/chat/completions",
    {
      model: "ok",
      stream: true,
      messages: [
        { role: "user", content: "2+2?" },
        { role: "assistant", content: "The answer i" },
        { role: "user", content: "go on" },
      ],
    },
    { "x-session-id": "fault-cut-replay" },
  );
  await readSse(response);
  const sent = (await next).body.messages;
  expect(sent[1]).toMatchObject({ role: "assistant", content: "The answer i" });
  expect(sent[1]).not.toHaveProperty("reasoning_content");
});

test("a chunk that is not JSON ends the turn with upstream_stream_corrupt: never dropped silently, not stored", async () => {
  const response = await gateway.post(
    "/v1/chat/completions",
    { model: "corrupt", stream: true, messages: [{ role: "user", content: "2+2?" }] },
    { "x-session-id": "fault-corrupt" },
  );
  expect(response.status).toBe(200);
  // carried (docs/api.md#carried-chat-completions): the client gets the upstream's bytes as they came, the unreadable
  // chunk with them, then carrierd's error event: the answer is not passed off as whole
  const text = await response.text();
  expect(text).toContain("data: {not json at all\n\n");
  const frames = text.split("\n\n").filter(Boolean);
  expect(frames.at(-1)).toBe("data: [DONE]");
  const failure = JSON.parse(frames.at(-2)!.slice("data: ".length)) as Chunk;
  expect(failure.error).toMatchObject({ code: "upstream_stream_corrupt", type: "upstream_error" });
  expect(failure.error!.message).toContain("not json at all");
  expect(await storedTurns("fault-corrupt")).toBe(0);
});

test("Responses: a cut-off stream ends with response.failed naming the cause, and is not stored", async () => {
  const response = await gateway.post("/v1/responses", { model: "cut", stream: true, input: "2+2?" }, { "x-session-id": "fault-resp-cut" });
  expect(response.status).toBe(200);
  const raw = await response.text();
  const events = raw
    .split("\n\n")
    .map((block) => block.split("\n").find((line) => line.startsWith("data: ")))
    .filter((line): line is string => line !== undefined)
    .map((line) => JSON.parse(line.slice(6)) as { type: string; response?: { id: string; status: string; error?: { code: string } }; code?: string });
  const types = events.map((event) => event.type);
  expect(types).not.toContain("response.completed");
  const failed = events.find((event) => event.type === "response.failed")!;
  expect(failed.response).toMatchObject({ status: "failed", error: { code: "upstream_stream_truncated" } });
  expect(events.find((event) => event.type === "error")?.code).toBe("upstream_stream_truncated");
  expect(types.at(-1)).toBe("response.failed");
  const stored = await gateway.fetch(`/v1/responses/${failed.response!.id}`);
  expect(stored.status).toBe(404);
  expect(await storedTurns("fault-resp-cut")).toBe(0);
});

import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { addKey } from "../keys/keys-support.js";
import { readFixture } from "../support/fixtures-dir.js";
import { deepseekRoutes } from "../support/family-routes.js";
import { startDeepSeek, type DeepSeekUpstream } from "../support/openai-upstream.js";

let upstream: DeepSeekUpstream;
let gateway: TestGateway;

beforeAll(async () => {
  upstream = await startDeepSeek();
  gateway = await startTestGateway({
    routes: deepseekRoutes(upstream.baseUrl),
    env: { DEEPSEEK_API_KEY: "sk-emulated" },
    gatewayOptions: { bodyLimit: 64 * 1024 },
  });
});
afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
});

const BODY = { model: "demo", max_tokens: 256, messages: [{ role: "user", content: "hi" }] };

async function post(body: unknown, headers: Record<string, string> = {}, path = "/v1/messages"): Promise<{ status: number; body: unknown; headers: Headers }> {
  const response = await fetch(`${gateway.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "anthropic-version": "2023-06-01", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json(), headers: response.headers };
}

const anthropicError = (type: string) => ({ type: "error", error: { type, message: expect.any(String) as string } });

describe("errors raised before the handler are in Anthropic's shape, with Anthropic's statuses", () => {
  test("401 authentication_error: no key, an unknown key in x-api-key or in Authorization: Bearer", async () => {
    for (const headers of [{}, { "x-api-key": "sk-wrong" }, { authorization: "Bearer sk-wrong" }]) {
      const answer = await post(BODY, headers);
      expect(answer.status).toBe(401);
      expect(answer.body).toEqual(anthropicError("authentication_error"));
    }
    for (const path of ["/v1/messages/count_tokens"]) expect((await post(BODY, {}, path)).body).toEqual(anthropicError("authentication_error"));
    // without a key, the message names the header Anthropic's clients send it in
    expect(JSON.stringify((await post(BODY)).body)).toContain("Send x-api-key: <key> or Authorization: Bearer <key>");
  });

  test("the key is accepted in x-api-key and in Authorization: Bearer, an access key of its own too", async () => {
    expect((await post(BODY, { "x-api-key": gateway.key })).status).toBe(200);
    expect((await post(BODY, { authorization: `Bearer ${gateway.key}` })).status).toBe(200);
    const own = await addKey(gateway, "claude-code");
    expect((await post(BODY, { "x-api-key": own })).status).toBe(200);
  });

  test("403 permission_error: a key without the chat scope; 404 for a model the key may not use (as if it did not exist)", async () => {
    const ops = await addKey(gateway, "ops-only", { scopes: ["admin"] });
    const answer = await post(BODY, { "x-api-key": ops });
    expect(answer.status).toBe(403);
    expect(answer.body).toEqual(anthropicError("permission_error"));
    const narrow = await addKey(gateway, "deepseek-only", { models: ["deepseek-reasoner"] });
    const refused = await post(BODY, { "x-api-key": narrow });
    expect(refused.status).toBe(404);
    expect(refused.body).toEqual(anthropicError("not_found_error"));
  });

  test("404 not_found_error: a model routes.yaml does not have", async () => {
    const answer = await post({ ...BODY, model: "no-such-model" }, { "x-api-key": gateway.key });
    expect(answer.status).toBe(404);
    expect(answer.body).toEqual(anthropicError("not_found_error"));
    const counted = await post({ model: "no-such-model", messages: BODY.messages }, { "x-api-key": gateway.key }, "/v1/messages/count_tokens");
    expect(counted.status).toBe(404);
  });

  test("413 request_too_large: a body over the limit, the connection closed", async () => {
    const answer = await post({ ...BODY, messages: [{ role: "user", content: "x".repeat(100 * 1024) }] }, { "x-api-key": gateway.key });
    expect(answer.status).toBe(413);
    expect(answer.body).toEqual(anthropicError("request_too_large"));
  });

  test("405 on a Messages path, and a malformed X-Session-Id, in Anthropic's shape", async () => {
    const wrong = await fetch(`${gateway.url}/v1/messages`, { headers: { "x-api-key": gateway.key } });
    expect(wrong.status).toBe(405);
    expect(await wrong.json()).toEqual(anthropicError("invalid_request_error"));
    const session = await post(BODY, { "x-api-key": gateway.key, "x-session-id": "bad id!" });
    expect(session.status).toBe(400);
    expect(session.body).toEqual(anthropicError("invalid_request_error"));
  });

  test("the other wire APIs keep OpenAI's shape", async () => {
    const chat = await post({ model: "demo", messages: [{ role: "user", content: "hi" }] }, {}, "/v1/chat/completions");
    expect(chat.status).toBe(401);
    expect(chat.body).toMatchObject({ error: { code: "invalid_api_key", type: "authentication_error" } });
    // x-api-key is the Messages API's header only
    const withHeader = await post({ model: "demo", messages: [{ role: "user", content: "hi" }] }, { "x-api-key": gateway.key }, "/v1/chat/completions");
    expect(withHeader.status).toBe(401);
  });
});

describe("the handler's own errors", () => {
  const key = () => ({ "x-api-key": gateway.key });

  test("400 invalid_request_error naming the parameter: max_tokens missing, a bad block, bad JSON", async () => {
    const { max_tokens: _dropped, ...noMax } = BODY;
    const missing = await post(noMax, key());
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual(anthropicError("invalid_request_error"));
    expect(JSON.stringify(missing.body)).toContain("max_tokens");
    const badBlock = await post({ ...BODY, messages: [{ role: "user", content: [{ type: "tool_result" }] }] }, key());
    expect(badBlock.status).toBe(400);
    expect(JSON.stringify(badBlock.body)).toContain("tool_use_id");
    const badJson = await post("{not json", key());
    expect(badJson.status).toBe(400);
    expect(badJson.body).toEqual(anthropicError("invalid_request_error"));
  });

  test("a refused body is worded as Anthropic words it: the dotted path, then the reason", async () => {
    const message = async (body: unknown) => ((await post(body, key())).body as { error: { message: string } }).error.message;
    const { max_tokens: _dropped, ...noMax } = BODY;
    expect(await message(noMax)).toBe("max_tokens: Field required");
    expect(await message({ ...BODY, messages: [{ role: "tool", content: "x" }] })).toBe("messages.0.role: Input should be 'user', 'assistant' or 'system'");
    expect(await message({ ...BODY, temperature: 2 })).toBe("temperature: Input should be less than or equal to 1");
    expect(await message({ ...BODY, max_tokens: "many" })).toBe("max_tokens: Input should be a valid integer");
    expect(await message({ ...BODY, messages: [{ role: "user", content: 7 }] })).toBe("messages.0.content: Input should be a valid string or a valid list");
  });

  test("Claude Code 2.1.337's request with a non-Claude model name, as captured, is accepted the first time and named by its session id", async () => {
    const captured = JSON.parse(readFixture("clients/claude-code-2.1.337-unrecognized-model-system-role-req.json")) as {
      headers: Record<string, string>;
      body: { model: string; messages: { role: string }[] };
    };
    expect(captured.body.messages[1]!.role).toBe("system");
    const sent = upstream.requests.length;
    const headers = Object.fromEntries(
      Object.entries(captured.headers).filter(([name]) => ["anthropic-beta", "anthropic-version", "x-claude-code-session-id", "x-app"].includes(name)),
    );
    const answer = await post({ ...captured.body, stream: false }, { ...headers, ...key() }); // whole, so this test reads it as JSON
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.headers.get("x-session-id")).toBe(captured.headers["x-claude-code-session-id"]);
    const roles = upstream.requests.slice(sent)[0]!.messages.map((message) => message.role);
    expect(roles).toEqual(["system", "user", "system"]);
    expect(upstream.statuses.slice(sent)).toEqual([200]);
  });

  test("a system message inside messages is accepted on every route, kept in its place", async () => {
    const messages = [
      { role: "user", content: [{ type: "text", text: "first" }] },
      { role: "system", content: [{ type: "text", text: "notes about the environment", cache_control: { type: "ephemeral" } }] },
      { role: "user", content: "second" },
    ];
    expect((await post({ ...BODY, messages }, key())).status).toBe(200);
    const sent = upstream.requests.length;
    const answer = await post({ ...BODY, model: "deepseek-reasoner", system: "be brief", messages }, key());
    expect(answer.status).toBe(200);
    expect(upstream.requests.slice(sent)[0]!.messages.map((message) => [message.role, message.content])).toEqual([
      ["system", "be brief"],
      ["user", "first"],
      ["system", "notes about the environment"],
      ["user", "second"],
    ]);
  });

  test("what only Anthropic runs is refused on another route, never dropped in silence", async () => {
    const serverTool = await post({ ...BODY, tools: [{ type: "web_search_20250305", name: "web_search" }] }, key());
    expect(serverTool.status).toBe(400);
    expect(JSON.stringify(serverTool.body)).toContain("server tools");
    const mcp = await post({ ...BODY, mcp_servers: [{ type: "url", url: "https://example.com/mcp", name: "x" }] }, key());
    expect(mcp.status).toBe(400);
    const foreignBlock = await post({ ...BODY, messages: [{ role: "user", content: [{ type: "server_tool_use", id: "x", name: "y", input: {} }] }] }, key());
    expect(foreignBlock.status).toBe(400);
  });

  test("an upstream's refusal keeps its status and message, in Anthropic's shape; the SDK raises its own error class", async () => {
    const client = new Anthropic({ apiKey: gateway.key, baseURL: gateway.url, maxRetries: 0 });
    const first = await client.messages.create({
      model: "deepseek-reasoner",
      max_tokens: 256,
      tools: [{ name: "weather", input_schema: { type: "object", properties: {} } }],
      messages: [{ role: "user", content: "weather?" }],
    });
    const toolUse = first.content.find((block) => block.type === "tool_use")!;
    // the same tool call, its reasoning lost, in another key's scope: nothing stored to re-attach
    const stranger = await addKey(gateway, "stranger");
    const other = new Anthropic({ apiKey: stranger, baseURL: gateway.url, maxRetries: 0 });
    const refused = other.messages.create({
      model: "deepseek-reasoner",
      max_tokens: 256,
      messages: [
        { role: "user", content: "weather?" },
        { role: "assistant", content: [toolUse] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: toolUse.id, content: "sunny" }] },
      ],
    });
    await expect(refused).rejects.toBeInstanceOf(Anthropic.BadRequestError);
    await expect(refused).rejects.toMatchObject({ status: 400, error: anthropicError("invalid_request_error") });
    await expect(refused).rejects.toThrow(/reasoning_content/);
  });

  test("the SDK's classes for refused keys and unknown models", async () => {
    const wrongKey = new Anthropic({ apiKey: "sk-wrong", baseURL: gateway.url, maxRetries: 0 });
    await expect(wrongKey.messages.create(BODY as Anthropic.MessageCreateParamsNonStreaming)).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
    const bearer = new Anthropic({ apiKey: null, authToken: gateway.key, baseURL: gateway.url, maxRetries: 0 });
    await expect(bearer.messages.create({ ...BODY, model: "nope" } as Anthropic.MessageCreateParamsNonStreaming)).rejects.toBeInstanceOf(
      Anthropic.NotFoundError,
    );
  });
});

import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { PluginLoadError, PluginRegistry } from "../../src/providers/plugin-registry.js";
import { readSse, startTestGateway, type TestGateway } from "../support/gateway.js";
import { chunkDeltas, type Chunk } from "./sse-chunks.js";

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}/`, import.meta.url));

describe("a broken plugin fails loudly, naming itself", () => {
  test("one that throws on import", async () => {
    const loading = PluginRegistry.load([fixture("plugins-throwing")]);
    await expect(loading).rejects.toBeInstanceOf(PluginLoadError);
    await expect(loading).rejects.toThrow(/plugin "throws-on-import" is broken: cannot import .*missing native dependency libfoo\.so/);
  });

  test("one written for another plugin API version", async () => {
    const loading = PluginRegistry.load([fixture("plugins-old-api")]);
    await expect(loading).rejects.toThrow('plugin "old-api" is broken: written for plugin API 0, this carrierd speaks 1');
    await expect(loading).rejects.toMatchObject({ code: "plugin_api_unsupported" });
  });

  test("the gateway refuses to start with it", async () => {
    await expect(startTestGateway({ routes: "version: 1\nproviders: {}\nmodels: []\n", pluginDirs: [fixture("plugins-old-api")] })).rejects.toThrow(/old-api/);
  });

  test("a --plugins folder that does not exist is an error, not silence", async () => {
    await expect(PluginRegistry.load([fixture("no-such-folder")])).rejects.toThrow(/does not exist/);
  });
});

test("a folder without an entry module is skipped with a warning; its neighbours load", async () => {
  const warnings: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      warnings.push(chunk.toString("utf8"));
      done();
    },
  });
  const registry = await PluginRegistry.load([fixture("plugins-mixed")], pino({ level: "warn" }, sink));
  expect([...registry.names]).toEqual(expect.arrayContaining(["demo", "echo", "openai-compatible"]));
  expect(registry.names.has("no-entry")).toBe(false);
  expect(warnings.join("")).toMatch(/no-entry.*no entry module|no entry module.*no-entry/);
});

test("the shipped plugins declare their API version and load from plugins/", async () => {
  const registry = await PluginRegistry.load([]);
  expect(registry.get("demo")?.definition.description).toMatch(/simulat/i);
  expect(registry.get("openai-compatible")?.definition.apiVersion).toBe(1);
});

test("an external plugin's native schema is compiled into a validator", async () => {
  const echo = (await PluginRegistry.load([fixture("plugins-mixed/echo")])).get("echo")!;
  expect(echo.validateNative?.({ seen: 2 })).toBeUndefined();
  expect(echo.validateNative?.({ seen: "two" })).toMatch(/integer/);
});

describe("an external plugin folder (--plugins) works end to end", () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway({
      routes: "version: 1\nproviders:\n  echoer: { plugin: echo }\nmodels:\n  - { name: echo-1, provider: echoer }\n",
      pluginDirs: [fixture("plugins-mixed")],
    });
  });
  afterAll(() => gateway.stop());

  test("streams its reasoning and answer through the gateway", async () => {
    const response = await gateway.post("/v1/chat/completions", { model: "echo-1", stream: true, messages: [{ role: "user", content: "ping" }] });
    expect(response.status).toBe(200);
    const summary = chunkDeltas((await readSse(response)).events as Chunk[]);
    expect(summary.reasoning).toBe("The user said 4 characters.");
    expect(summary.content).toBe("echo: ping");
    expect(summary.finishReason).toBe("stop");
  });

  test("text carrying CR/LF and SSE syntax cannot break the stream's framing", async () => {
    const hostile = 'one\r\n\r\ndata: [DONE]\n\nevent: error\ndata: {"injected":true}\n\n: comment\rtwo';
    const response = await gateway.post("/v1/chat/completions", { model: "echo-1", stream: true, messages: [{ role: "user", content: hostile }] });
    const { events, raw } = await readSse(response);
    const lines = raw.split("\n").filter((line) => line !== "");
    for (const line of lines) expect(line).toMatch(/^(data: |: )/);
    expect(lines.filter((line) => line === "data: [DONE]")).toHaveLength(1);
    expect(lines.at(-1)).toBe("data: [DONE]");
    expect(raw).not.toContain("\r");
    expect(chunkDeltas(events as Chunk[]).content).toBe(`echo: ${hostile}`);
  });
});

test("the shipped plugins import carrierd only through its plugin API, and declare their version as a literal", () => {
  const root = fileURLToPath(new URL("../../plugins", import.meta.url));
  const offending: string[] = [];
  for (const file of readdirSync(root, { recursive: true, encoding: "utf8" }).filter((name) => name.endsWith(".ts") && !name.endsWith(".test.ts"))) {
    const text = readFileSync(join(root, file), "utf8");
    for (const [, target] of text.matchAll(/from "((?:\.\.\/)+src\/[^"]+)"/g))
      if (!target!.endsWith("/src/providers/plugin-api.js")) offending.push(`${file}: ${target}`);
    if (file.endsWith("index.ts")) expect(text, file).toMatch(/apiVersion: \d+,/);
  }
  expect(offending).toEqual([]);
});

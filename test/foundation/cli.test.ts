import { spawn } from "node:child_process";
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, onTestFinished, test } from "vitest";
import { track } from "../support/child-processes.js";
import { parse } from "yaml";
import { carrierd, cleanEnv, REPO, startGatewayProcess } from "./cli-process.js";

const home = mkdtempSync(join(tmpdir(), "carrierd-cli-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));

describe("routes check", () => {
  test("a broken file exits 1 with file:line:col problems on stderr", async () => {
    const file = join(home, "broken.yaml");
    writeFileSync(file, "version: 1\nproviders:\n  demo: { plugin: nope }\nmodels:\n  - { name: demo, provider: demo, colour: red }\n");
    const result = await carrierd(["routes", "check", file]);
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split("\n");
    expect(lines).toContain(`${file}:5:35: models.0: unknown key "colour"`);
    for (const line of lines) expect(line).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:\\d+:\\d+: `));
  });

  test("a missing plugin is named in the problem", async () => {
    const file = join(home, "no-plugin.yaml");
    writeFileSync(file, "version: 1\nproviders:\n  claude: { plugin: anthropic-v9 }\nmodels: []\n");
    const result = await carrierd(["routes", "check", file]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${file}:3:21: provider "claude" names plugin "anthropic-v9", which is not loaded`);
  });

  test("the shipped routes.yaml passes", async () => {
    const result = await carrierd(["routes", "check"]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/routes\.yaml: ok \(revision [0-9a-f]{12}; \d+ providers, \d+ models, \d+ carrier routes\)/);
  });
});

describe("routes explain", () => {
  test("shows the resolved policy for deepseek-reasoner, must_echo included", async () => {
    const result = await carrierd(["routes", "explain", "--model", "deepseek-reasoner"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^must_echo\s+true$/m);
    expect(result.stdout).toMatch(/^fields\s+\["reasoning_content"\]$/m);
    expect(result.stdout).toMatch(/^host\s+api\.deepseek\.com$/m);
  });

  test("--json is machine-readable, and --host explains as if served from elsewhere", async () => {
    const result = await carrierd(["routes", "explain", "--model", "deepseek-reasoner", "--host", "api.mistral.ai", "--json"]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ model: "deepseek-reasoner", provider: "deepseek", host: "api.mistral.ai", fields: [], must_echo: false });
    // numbered from 1, as events, logs and the dashboard number it
    const carriers = (parse(readFileSync(join(REPO, "routes.yaml"), "utf8")) as { carriers: { match: { host?: string | string[] } }[] }).carriers;
    const position = carriers.findIndex((route) => [route.match.host ?? []].flat().includes("mistral.ai"));
    expect(JSON.parse(result.stdout).route).toBe(position + 1);
  });

  test("shows the dialect in force with the entry behind each key, and the model family rule", async () => {
    const file = join(home, "dialects.yaml");
    writeFileSync(
      file,
      `version: 1
providers:
  deepseek: { plugin: openai-compatible, base_url: https://api.deepseek.com/v1 }
models:
  - { name: "ds/*", provider: deepseek }
dialects:
  - match: { model: "deepseek-v9*" }
    token_limit: max_completion_tokens
model_family:
  strip: ["-preview$"]
`,
    );
    const result = await carrierd(["routes", "explain", "--routes", file, "--model", "ds/deepseek-v9-preview", "--json"]);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      dialect: { effort: "reasoning_effort", disable: "thinking", developer_role: "system", token_limit: "max_completion_tokens" },
      dialect_from: { effort: "shipped 2", disable: "shipped 2", developer_role: "fallback", token_limit: "dialects 1" },
      model_family: "deepseek-v9",
      family_strip: { patterns: ["-preview$"], from: "model_family" },
    });
    const text = await carrierd(["routes", "explain", "--model", "deepseek-reasoner", "--host", "openrouter.ai"]);
    expect(text.stdout).toMatch(/^dialect\s+\{"effort":"openrouter","disable":"openrouter","developer_role":"system","token_limit":"max_tokens"\}$/m);
    expect(text.stdout).toMatch(/^family_strip\s+\{"patterns":\[.+\],"from":"shipped"\}$/m);
  });

  test("an unknown model exits 1", async () => {
    const result = await carrierd(["routes", "explain", "--model", "nope"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('no model matches "nope"');
  });
});

describe("plugins list", () => {
  test("lists the shipped plugins", async () => {
    const result = await carrierd(["plugins", "list"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^demo\s/m);
    expect(result.stdout).toMatch(/^openai-compatible\s/m);
  });

  test("--plugins adds external folders; --json shows native record types", async () => {
    const extra = fileURLToPath(new URL("./fixtures/plugins-mixed", import.meta.url));
    const result = await carrierd(["plugins", "list", "--plugins", extra, "--json"]);
    expect(result.code).toBe(0);
    const rows = JSON.parse(result.stdout) as { name: string; native_record: string | null; api_version: number }[];
    expect(rows.find((row) => row.name === "echo")).toMatchObject({ native_record: "echo_record", api_version: 1 });
  });

  test("a broken plugin fails the command with its name", async () => {
    const broken = fileURLToPath(new URL("./fixtures/plugins-old-api", import.meta.url));
    const result = await carrierd(["plugins", "list", "--plugins", broken]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('plugin "old-api" is broken');
  });
});

test.each(
  [
    [],
    ["gateway"],
    ["routes"],
    ["routes", "check"],
    ["routes", "explain"],
    ["plugins", "list"],
    ["logs"],
    ["sessions"],
    ["sessions", "list"],
    ["sessions", "show"],
    ["sessions", "branch"],
    ["sessions", "rm"],
    ["verdicts"],
    ["verdicts", "list"],
    ["verdicts", "clear"],
    ["chat"],
  ].map((command) => [command]),
)("carrierd %j --help works and offers --home", async (command) => {
  const result = await carrierd([...command, "--help"]);
  expect(result.code).toBe(0);
  expect(result.stdout).toContain("carrierd");
  expect(result.stdout).toContain("--home");
});

test("an unknown command exits 1 with help", async () => {
  const result = await carrierd(["frobnicate"]);
  expect(result.code).toBe(1);
  expect(result.stderr).toMatch(/Unknown argument|Unknown command/i);
});

describe("gateway", () => {
  test("--port 0 prints the real address, serves the demo, keeps its generated key 0600 across restarts, and logs", async () => {
    const gatewayHome = join(home, "gw");
    const env = cleanEnv({ CARRIERD_HOME: gatewayHome });
    const first = await startGatewayProcess(["--port", "0"], env);
    onTestFinished(() => void first.stop()); // a failed assertion must not leave the daemon running
    expect(first.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(first.url).not.toMatch(/:0$/);
    expect(first.stdout()).toContain(`API key: ${join(gatewayHome, "api_key")}`);

    const keyFile = join(gatewayHome, "api_key");
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const key = readFileSync(keyFile, "utf8").trim();
    expect(key.length).toBeGreaterThanOrEqual(32);

    expect((await fetch(`${first.url}/health`)).status).toBe(200);
    expect((await fetch(`${first.url}/v1/models`)).status).toBe(401);
    const models = (await (await fetch(`${first.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).json()) as {
      data: { id: string; description?: string }[];
    };
    expect(models.data.find((model) => model.id === "demo")?.description).toMatch(/SIMULATION/);
    const response = await fetch(`${first.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "demo", stream: true, messages: [{ role: "user", content: "What is 2+2?" }] }),
    });
    const text = await response.text();
    expect(text).toContain('"reasoning_content"');
    expect(text).toContain("data: [DONE]");
    expect(await first.stop()).toBe(0);

    const second = await startGatewayProcess(["--port", "0"], env);
    onTestFinished(() => void second.stop());
    expect(readFileSync(keyFile, "utf8").trim()).toBe(key);
    expect((await fetch(`${second.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    expect(await second.stop()).toBe(0);

    // `logs` reads what the gateway wrote, honouring CARRIERD_HOME like every subcommand
    const logs = await carrierd(["logs"], { env });
    expect(logs.code).toBe(0);
    expect(logs.stdout).toMatch(/INFO\s+gateway started/);
    expect(logs.stdout).toContain("generated an API key");
    const warnOnly = await carrierd(["logs", "--home", gatewayHome, "--level", "warn"]);
    expect(warnOnly.stdout).not.toMatch(/INFO/);
  });

  /** Opens a streaming demo request (the shipped demo is paced, so it is still open after its first chunk). */
  async function openStream(url: string, key: string): Promise<ReadableStreamDefaultReader<Uint8Array>> {
    const response = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "demo", stream: true, messages: [{ role: "user", content: "Tell me about graceful shutdowns" }] }),
    });
    const reader = response.body!.getReader();
    await reader.read();
    return reader;
  }

  async function readRest(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<string> {
    let text = "";
    try {
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += new TextDecoder().decode(chunk.value);
    } catch {
      // the connection was cut
    }
    return text;
  }

  test("SIGTERM lets an open stream finish, then exits 0", async () => {
    const key = "graceful-key-0123456789";
    const gateway = await startGatewayProcess(["--port", "0", "--home", join(home, "grace")], cleanEnv({ CARRIERD_API_KEY: key }));
    onTestFinished(() => void gateway.stop());
    const reader = await openStream(gateway.url, key);
    const exited = gateway.stop();
    expect(await readRest(reader)).toMatch(/data: \[DONE\]\n\n$/);
    expect(await exited).toBe(0);
  });

  test("a second signal stops at once, without waiting for open streams", async () => {
    const key = "impatient-key-0123456789";
    const gateway = await startGatewayProcess(["--port", "0", "--home", join(home, "impatient")], cleanEnv({ CARRIERD_API_KEY: key }));
    onTestFinished(() => void gateway.stop());
    const reader = await openStream(gateway.url, key);
    gateway.process.kill("SIGTERM");
    await gateway.waitFor(/stopping: finishing open requests/); // signals are not queued: send the second once the first is handled
    gateway.process.kill("SIGTERM");
    expect(await gateway.stop()).toBe(143);
    expect(await readRest(reader)).not.toContain("[DONE]");
  });

  test("CARRIERD_API_KEY replaces the generated key; --body-limit sets the 413 threshold", async () => {
    const keyedHome = join(home, "keyed");
    const gateway = await startGatewayProcess(
      ["--port", "0", "--home", keyedHome, "--body-limit", "1KiB"],
      cleanEnv({ CARRIERD_API_KEY: "operator-chosen-key-000000" }),
    );
    try {
      const authorization = "Bearer operator-chosen-key-000000";
      expect((await fetch(`${gateway.url}/v1/models`, { headers: { authorization } })).status).toBe(200);
      expect(() => statSync(join(keyedHome, "api_key"))).toThrow();
      const body = (pad: number) => JSON.stringify({ model: "demo", messages: [{ role: "user", content: "x".repeat(pad) }] });
      const post = (text: string) =>
        fetch(`${gateway.url}/v1/chat/completions`, { method: "POST", headers: { authorization, "content-type": "application/json" }, body: text });
      expect((await post(body(900))).status).toBe(200);
      expect((await post(body(1100))).status).toBe(413);
    } finally {
      await gateway.stop();
    }
  });

  test("on one CPU it advises node's --single-threaded-gc, unless node already runs with it", async () => {
    const oneCpu = { launcher: ["taskset", "-c", "0"] };
    const pinned = await startGatewayProcess(["--port", "0", "--home", join(home, "one-cpu")], cleanEnv(), oneCpu);
    try {
      await pinned.waitFor(/node --single-threaded-gc \S*bin\/carrierd gateway/);
    } finally {
      await pinned.stop();
    }
    const advised = await startGatewayProcess(["--port", "0", "--home", join(home, "one-cpu")], cleanEnv(), { ...oneCpu, nodeFlags: ["--single-threaded-gc"] });
    try {
      expect(advised.stdout()).toContain("carrierd listening on");
      expect(advised.stdout()).not.toContain("single-threaded-gc");
    } finally {
      await advised.stop();
    }
  });

  test("a broken routes.yaml stops the start with line:col problems", async () => {
    const file = join(home, "bad-start.yaml");
    writeFileSync(file, "version: 1\nproviders: {}\nmodels:\n  - { name: x, provider: ghost }\n");
    const result = await carrierd(["gateway", "--port", "0", "--routes", file, "--home", join(home, "bad")]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${file}:4:26: model "x" names provider "ghost"`);
  });

  test("logs --follow prints new lines as they are written, also after rotation by truncation or by rename", async () => {
    const logHome = join(home, "follow");
    mkdirSync(join(logHome, "logs"), { recursive: true });
    const file = join(logHome, "logs", "carrierd.log");
    const line = (msg: string) => `${JSON.stringify({ level: 30, time: Date.UTC(2026, 0, 1), pid: 1, msg })}\n`;
    writeFileSync(file, line("already there"));
    const child = track(spawn(process.execPath, ["bin/carrierd", "logs", "--follow", "--home", logHome], { cwd: REPO, env: cleanEnv(), detached: true }));
    onTestFinished(() => void child.kill());
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
    /** Resolves once `text` has been printed (the accumulator above runs first, being registered first). */
    const seen = (text: string) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (!out.includes(text)) return;
          child.stdout.off("data", check);
          resolve();
        };
        child.stdout.on("data", check);
        check();
      });
    await seen("already there");
    appendFileSync(file, line("written later"));
    await seen("written later");
    writeFileSync(file, line("after rotation"));
    await seen("after rotation");
    renameSync(file, `${file}.1`); // logrotate without copytruncate: move away, then a new file
    writeFileSync(file, line("in the new file"));
    await seen("in the new file");
    expect(out).toMatch(/^2026-01-01T00:00:00\.000Z INFO  already there$/m);
  });

  test("logs on an empty home says there is no log yet", async () => {
    const result = await carrierd(["logs", "--home", join(home, "never-ran")]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("no log yet");
  });
});

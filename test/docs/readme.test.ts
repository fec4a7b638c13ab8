import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { track } from "../support/child-processes.js";
import { cleanEnv, startGatewayProcess, type RunningGateway } from "../foundation/cli-process.js";
import { readDoc, REPO } from "./markdown.js";

/**
 * README.md is true for a newcomer: the gateway is started the way it says
 * (`npm start`, in a fresh HOME), and what it shows is run as written from
 * the clone — its `./bin/carrierd` commands, the curl request, the openai
 * SDK example (plain JavaScript, Node 20) and the dashboard's address. The
 * one change: the README's port 8642 becomes the test gateway's own port.
 */
const README = readDoc("README.md");
const home = mkdtempSync(join(tmpdir(), "carrierd-readme-"));
const env = cleanEnv({ HOME: home });
let gateway: RunningGateway;

beforeAll(async () => {
  // `npm start` is this command line (exec'd: npm's child is the gateway itself); the test adds only --port 0
  const start = (JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { scripts: { start: string } }).scripts.start;
  expect(start).toBe("exec node bin/carrierd gateway");
  gateway = await startGatewayProcess(["--port", "0"], env);
});
afterAll(async () => {
  await gateway?.stop();
  rmSync(home, { recursive: true, force: true });
});

interface Block {
  lang: string;
  body: string;
}

function fencedBlocks(markdown: string): Block[] {
  return [...markdown.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((match) => ({ lang: match[1]!, body: match[2]! }));
}

/** The README's address and port, as the running test gateway has them. */
const here = (text: string) => text.replaceAll("http://127.0.0.1:8642", gateway.url);

function run(command: string, args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = track(
      execFile(command, args, { cwd: REPO, env, timeout: 30_000, detached: true, maxBuffer: 8 * 1024 * 1024 }, (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr }),
      ),
    );
    if (input !== undefined) child.stdin?.end(input);
  });
}

test("the start prints where the key is and where it listens, as shown", () => {
  const messages = gateway
    .stdout()
    .split("\n")
    .filter((line) => line.trim())
    .map((line) => (JSON.parse(line) as { msg: string }).msg);
  expect(README).toContain("API key: /home/you/.carrierd/api_key\ncarrierd listening on http://127.0.0.1:8642");
  expect(messages).toContain(`API key: ${home}/.carrierd/api_key`);
  expect(messages).toContain(`carrierd listening on ${gateway.url}`);
});

test("every ./bin/carrierd command the README shows runs from the clone and succeeds", async () => {
  const fenced = fencedBlocks(README)
    .filter((block) => block.lang === "sh")
    .flatMap((block) => block.body.split("\n"))
    .map((line) => line.replace(/\s+#.*$/, "").trim())
    .filter((line) => line.startsWith("./bin/carrierd "));
  const inline = [...README.matchAll(/`(\.\/bin\/carrierd [^`]+)`/g)].map((match) => match[1]!).filter((command) => !command.includes("…"));
  const commands = [...new Set([...fenced, ...inline])];
  expect(commands).toEqual(
    expect.arrayContaining(["./bin/carrierd routes check routes.yaml", "./bin/carrierd routes explain --model deepseek-reasoner", "./bin/carrierd --help"]),
  );
  // two at a time, one per core: all at once, on a loaded two-core machine each start waited on the others past its own 30 s
  const results: { command: string; code: number; stdout: string; stderr: string }[] = [];
  const left = [...commands];
  await Promise.all(
    [0, 1].map(async () => {
      for (let command = left.shift(); command !== undefined; command = left.shift()) results.push({ command, ...(await run("bash", ["-c", command])) });
    }),
  );
  expect(results.map((result) => result.command).sort()).toEqual([...commands].sort());
  for (const result of results) expect(result.code, `${result.command}\n${result.stdout}\n${result.stderr}`).toBe(0);
}, 60_000); // every command a whole Node start: past 20 s on a loaded 2-core machine

test("the curl request streams what the README shows", async () => {
  const blocks = fencedBlocks(README);
  const at = blocks.findIndex((block) => block.lang === "sh" && block.body.startsWith("curl "));
  expect(at, "the README shows a curl request").toBeGreaterThanOrEqual(0);
  const curl = blocks[at];
  const result = await run("bash", ["-c", here(curl!.body)]);
  expect(result.code, result.stderr).toBe(0);
  // the output block after it, its elisions (…) left out: every shown fragment is in the real stream
  const fragments = blocks[at + 1]!.body.split("\n")
    .flatMap((line) => line.split("…"))
    .map((fragment) => fragment.trim())
    .filter((fragment) => fragment.length > 3);
  expect(fragments.length).toBeGreaterThan(5);
  for (const fragment of fragments) expect(result.stdout, fragment).toContain(fragment);
});

test("the openai SDK example runs as written on this Node, plain JavaScript, and prints the simulated answer", async () => {
  const example = fencedBlocks(README).find((block) => block.lang === "js" && block.body.includes('from "openai"'));
  expect(example, "the README shows the SDK example as a js block").toBeDefined();
  expect(README).toContain("`node watch.mjs`");
  // as `node watch.mjs` in the clone: an ES module whose "openai" resolves from the clone's node_modules
  const result = await run(process.execPath, ["--input-type=module", "-"], here(example!.body));
  expect(result.code, result.stderr).toBe(0);
  expect(result.stdout).toContain("(simulated) The answer is 42.");
  expect(result.stdout).toContain("\x1b[2m"); // the reasoning, dimmed
  expect(README).toContain("(simulated) The answer is 42.");
});

test("the dashboard is where the README says, and asks for the key", async () => {
  const address = /<(http:\/\/127\.0\.0\.1:8642\/dashboard)>/.exec(README)?.[1];
  expect(address, "the README gives the dashboard's address").toBeDefined();
  const response = await fetch(here(address!));
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^text\/html/);
  const page = await response.text();
  expect(page).toContain('id="key-form"');
  expect(README).toMatch(/paste the contents of\s+`~\/\.carrierd\/api_key`/);
});

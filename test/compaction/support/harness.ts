import { vi } from "vitest";
import { sessionsCommand } from "../../../src/cli/commands/sessions.js";
import { EVENT_BUS } from "../../../src/foundation/container/tokens.js";
import type { EventBus, GatewayEvent } from "../../../src/foundation/event-bus/event-bus.js";
import { afterGatewayCommits, type TestGateway } from "../../support/gateway.js";

export { captureLog, type CapturedLog } from "../../support/captured-log.js";

/** Every `session.compacted` event the gateway publishes from now on. */
export function collectCompactions(gateway: TestGateway): GatewayEvent[] {
  const events: GatewayEvent[] = [];
  gateway.container.resolve<EventBus>(EVENT_BUS).subscribe((event) => events.push(event), ["session.compacted"]);
  return events;
}

export interface ResponseResult {
  readonly status: number;
  readonly sessionId: string;
  readonly body: { id: string; output: { type: string; call_id?: string; content?: { text: string }[] }[]; error?: unknown };
}

/** POST /v1/responses, non-streamed. */
export async function respond(gateway: TestGateway, body: Record<string, unknown>): Promise<ResponseResult> {
  const response = await gateway.post("/v1/responses", { stream: false, ...body });
  return { status: response.status, sessionId: response.headers.get("x-session-id") ?? "", body: (await response.json()) as ResponseResult["body"] };
}

/** Runs `carrierd sessions …` in process against the gateway's home once its turns are committed, returning what it printed to stdout. */
export async function sessionsCli(gateway: TestGateway, argv: string[]): Promise<{ out: string; err: string; exitCode: number | undefined }> {
  const home = gateway.home;
  await afterGatewayCommits(gateway);
  const printed: string[] = [];
  const errors: string[] = [];
  const logSpy = vi.spyOn(console, "log").mockImplementation((...args) => void printed.push(args.join(" ")));
  const errorSpy = vi.spyOn(console, "error").mockImplementation((...args) => void errors.push(args.join(" ")));
  const previous = process.exitCode;
  process.exitCode = undefined;
  try {
    const yargs = (await import("yargs")).default;
    await yargs(["sessions", ...argv, "--home", home])
      .option("home", { type: "string", global: true })
      .command(sessionsCommand)
      .strict()
      .fail(false)
      .parseAsync();
    return { out: printed.join("\n"), err: errors.join("\n"), exitCode: process.exitCode as number | undefined };
  } finally {
    process.exitCode = previous;
    logSpy.mockRestore();
    errorSpy.mockRestore();
  }
}

/** A `sessions show --json` turn, as far as these tests read it. */
export interface ShownTurn {
  position: number;
  active: boolean;
  content: string;
  tool_calls: { id: string }[];
  carriers: string[];
  reasoning_text: string | null;
  reasoning_details: unknown;
}

export interface ShownSession {
  id: string;
  parent_id: string | null;
  turns: ShownTurn[];
  checkpoints: { id: string; summary: string; archived_turns: number; archived_through: number; response_id: string | null }[];
}

export async function showSession(gateway: TestGateway, sessionId: string, all = false): Promise<ShownSession> {
  const result = await sessionsCli(gateway, ["show", sessionId, "--json", ...(all ? ["--all"] : [])]);
  return JSON.parse(result.out) as ShownSession;
}

import WebSocket from "ws";
import type { TestGateway } from "../support/gateway.js";
import { waitFor } from "../support/wait-for.js";

/** A test subscriber: every message it receives, in order, and how it closed. */
export interface EventClient {
  readonly ws: WebSocket;
  readonly messages: Record<string, unknown>[];
  /** Resolves with the first message (already received or future) that matches. */
  waitFor(predicate: (message: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Resolves when the connection has closed. */
  readonly closed: Promise<{ code: number; reason: string }>;
  send(body: unknown): void;
  /** Sends subscribe and waits for the acknowledgement. */
  subscribe(filter?: { sessions?: string[]; events?: string[] }): Promise<Record<string, unknown>>;
  close(): void;
}

export function eventsUrl(gateway: Pick<TestGateway, "url">): string {
  return `${gateway.url.replace(/^http/, "ws")}/v1/events`;
}

/** Opens `/v1/events`; with `auth: "header"` the key goes in the upgrade's Authorization header. */
export async function openEvents(
  gateway: Pick<TestGateway, "url" | "key">,
  options: { auth?: "header" | "message" | "none"; key?: string; headers?: Record<string, string>; autoPong?: boolean } = {},
): Promise<EventClient> {
  const auth = options.auth ?? "header";
  const key = options.key ?? gateway.key;
  const headers = { ...(auth === "header" ? { authorization: `Bearer ${key}` } : {}), ...options.headers };
  const ws = new WebSocket(eventsUrl(gateway), { headers, autoPong: options.autoPong ?? true });
  const messages: Record<string, unknown>[] = [];
  const waiters = new Set<() => void>();
  ws.on("message", (data) => {
    messages.push(JSON.parse(data.toString()) as Record<string, unknown>);
    for (const waiter of waiters) waiter();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on("close", (code, reason) => resolve({ code, reason: reason.toString() })));
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  if (auth === "message") ws.send(JSON.stringify({ type: "auth", key }));
  const client: EventClient = {
    ws,
    messages,
    closed,
    send: (body) => ws.send(typeof body === "string" ? body : JSON.stringify(body)),
    waitFor(predicate, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = messages.find(predicate);
          if (!found) return false;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(found);
          return true;
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no matching message within ${timeoutMs} ms; got ${messages.map((message) => message.type).join(", ") || "nothing"}`));
        }, timeoutMs);
        if (!check()) waiters.add(check);
      });
    },
    async subscribe(filter = {}) {
      const before = messages.length;
      ws.send(JSON.stringify({ type: "subscribe", ...filter }));
      return client.waitFor((message) => message.type === "subscribed" && messages.indexOf(message) >= before);
    },
    close: () => ws.close(),
  };
  return client;
}

/** Refused upgrades: the HTTP status of the refusal. */
export function upgradeStatus(gateway: TestGateway, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(eventsUrl(gateway), { headers });
    ws.on("unexpected-response", (_request, response) => {
      resolve(response.statusCode ?? 0);
      ws.terminate();
    });
    ws.on("open", () => {
      ws.close();
      resolve(101);
    });
    ws.on("error", (error) => {
      if (!/Unexpected server response/.test(error.message)) reject(error);
    });
  });
}

/** Polls a condition the test cannot await as an event (state inside the gateway). */
export async function until(condition: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  await waitFor(condition, { timeoutMs, intervalMs: 20 });
}

import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { parse } from "yaml";
import { readFixture } from "./fixtures-dir.js";

/** Recorded real traffic (charmbracelet/fantasy go-vcr cassettes) under test/fixtures/cassettes, with its LICENSE and NOTICE. */

export interface Interaction {
  request: { url: string; body: string };
  response: { body: string; code: number; headers: Record<string, string[]> };
}

export function loadCassette(name: string): Interaction[] {
  return (parse(readFixture(`cassettes/${name}.yaml`)) as { interactions: Interaction[] }).interactions;
}

export interface CassetteUpstream {
  readonly baseUrl: string;
  /** Bodies received, parsed, in order. */
  readonly received: { messages: Record<string, unknown>[]; [key: string]: unknown }[];
  close(): Promise<void>;
}

/** Answers the n-th request with the n-th recorded response, byte for byte, with its recorded status and content type. */
export async function startCassetteUpstream(interactions: Interaction[]): Promise<CassetteUpstream> {
  const received: CassetteUpstream["received"] = [];
  const server = createServer((request, response) => {
    let raw = "";
    request.setEncoding("utf8");
    request.on("data", (chunk: string) => (raw += chunk));
    request.on("end", () => {
      received.push(JSON.parse(raw) as CassetteUpstream["received"][number]);
      const recorded = interactions[received.length - 1];
      if (!recorded) {
        response.writeHead(500, { "content-type": "application/json" }).end('{"error":{"message":"cassette has no more interactions"}}');
        return;
      }
      const contentType = recorded.response.headers["Content-Type"]?.[0] ?? "application/json";
      response.writeHead(recorded.response.code, { "content-type": contentType }).end(recorded.response.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

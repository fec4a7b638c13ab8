import { createServer, connect, type Socket } from "node:net";
import type { AddressInfo } from "node:net";

/**
 * A TCP proxy on loopback in front of a server (PostgreSQL), which a test
 * can cut and restore: the shared server keeps running for everyone else
 * while this test's gateways lose it.
 */
export interface TcpProxy {
  readonly port: number;
  /** Every open connection reset, and new ones refused (accepted and reset at once) until `restore`. */
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const open = new Set<Socket>();
  let refusing = false;
  const server = createServer((client) => {
    if (refusing) {
      client.resetAndDestroy();
      return;
    }
    const upstream = connect(targetPort, targetHost);
    open.add(client).add(upstream);
    const drop = () => {
      open.delete(client);
      open.delete(upstream);
      client.destroy();
      upstream.destroy();
    };
    client.on("error", drop).on("close", drop);
    upstream.on("error", drop).on("close", drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    cut() {
      refusing = true;
      for (const socket of open) socket.resetAndDestroy();
      open.clear();
    },
    restore() {
      refusing = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

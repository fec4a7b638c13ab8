import type { StoreChoice } from "../../src/foundation/config/store-choice.js";
import { startTestGateway, type TestGateway, type TestGatewayOptions } from "./gateway.js";
import { freshSchema } from "./postgres.js";

/** Gateways sharing one PostgreSQL store (a fresh schema of the run's database), each with a pool of its own. */
export interface PgCluster {
  readonly gateways: TestGateway[];
  readonly store: Extract<StoreChoice, { kind: "postgres" }>;
  /** The gateway for turn `n` (0-based) when turns rotate across the instances: A, B, C, A, … */
  at(turn: number): TestGateway;
  stop(): Promise<void>;
}

/**
 * `size` real gateways in this process on one PostgreSQL store. They share
 * nothing but the database: each has its own container, pool, event bus and
 * home, exactly what separate processes behind a load balancer share.
 */
export async function startPgCluster(size: number, options: Omit<TestGatewayOptions, "gatewayOptions" | "home">): Promise<PgCluster> {
  const schema = await freshSchema();
  const store = { kind: "postgres" as const, url: schema.url, poolSize: 2 };
  const gateways: TestGateway[] = [];
  try {
    for (let index = 0; index < size; index++) gateways.push(await startTestGateway({ ...options, gatewayOptions: { store } }));
  } catch (error) {
    for (const gateway of gateways) await gateway.stop();
    await schema.drop();
    throw error;
  }
  return {
    gateways,
    store,
    at: (turn) => gateways[turn % gateways.length]!,
    async stop() {
      for (const gateway of gateways) await gateway.stop();
      await schema.drop();
    },
  };
}

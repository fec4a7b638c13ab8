import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import type { StoreChoice } from "../../src/foundation/config/store-choice.js";
import { newDataScope, newSecret, secretHash } from "../../src/http/keys/secret.js";
import { openStorage } from "../../src/storage/open/open-storage.js";
import type { Storage } from "../../src/storage/storage.js";
import { openEvents } from "../events/ws-client.js";
import { carrierd, cleanEnv } from "../foundation/cli-process.js";
import { DEMO_ROUTES, startTestGateway, storageOf, type TestGateway } from "../support/gateway.js";
import { startPgCluster, type PgCluster } from "../support/pg-cluster.js";
import { announceSkipped, pgSkipReason } from "../support/postgres.js";
import { bearer, keyRingOf } from "./keys-support.js";

/**
 * A key works the moment `carrierd keys create` prints it, on every
 * instance: a key the ring does not hold is looked up in the store before
 * it is refused (docs/operators.md, "Access keys"). Wrong keys cost the
 * store at most one read per distinct key per remembered time, and a
 * revocation is still in force within a second.
 */
interface Setup {
  /** Every gateway on the one store. */
  readonly gateways: TestGateway[];
  /** The store opened apart from the gateways, as a `carrierd keys` command opens it. */
  readonly cli: Storage;
  /** The flags a `carrierd keys` process needs to reach the same store. */
  readonly cliFlags: string[];
  stop(): Promise<void>;
}

async function sqliteSetup(): Promise<Setup> {
  const gateway = await startTestGateway({ routes: DEMO_ROUTES });
  const cli = await openStorage(undefined, { home: gateway.home });
  return {
    gateways: [gateway],
    cli,
    cliFlags: ["--home", gateway.home],
    async stop() {
      await cli.close();
      await gateway.stop();
    },
  };
}

async function postgresSetup(): Promise<Setup> {
  const cluster: PgCluster = await startPgCluster(2, { routes: DEMO_ROUTES });
  const store: StoreChoice = cluster.store;
  const cli = await openStorage(store, { home: cluster.gateways[0]!.home });
  return {
    gateways: cluster.gateways,
    cli,
    cliFlags: ["--home", cluster.gateways[0]!.home, "--store", cluster.store.url],
    async stop() {
      await cli.close();
      await cluster.stop();
    },
  };
}

/** Creates a key as `carrierd keys create` does, in the store opened apart from the gateways; nothing tells the gateways. */
async function createKey(storage: Storage, name: string): Promise<string> {
  const secret = newSecret();
  await storage.keys.update({
    create: {
      name,
      secretHash: secretHash(secret),
      dataScope: newDataScope(),
      scopes: ["chat", "events"],
      models: [],
      eventsOf: [],
      createdAt: Date.now(),
      expiresAt: null,
    },
  });
  return secret;
}

const modelsStatus = (gateway: TestGateway, secret: string) =>
  fetch(`${gateway.url}/v1/models`, { headers: bearer(secret) }).then((response) => response.status);

function suite(backend: string, start: () => Promise<Setup>): void {
  let setup: Setup;
  beforeAll(async () => {
    setup = await start();
  });
  afterAll(() => setup?.stop());

  test(`${backend}: 100 keys, each used on every instance the moment it is created: 0 refusals`, async () => {
    const refused: string[] = [];
    for (let index = 0; index < 100; index++) {
      const secret = await createKey(setup.cli, `at-once-${index}`);
      const statuses = await Promise.all(setup.gateways.map((gateway) => modelsStatus(gateway, secret)));
      statuses.forEach((status, instance) => status !== 200 && refused.push(`key ${index} on instance ${instance}: ${status}`));
    }
    expect(refused).toEqual([]);
  });

  test(`${backend}: a key printed by \`carrierd keys create\` works at once, over HTTP and the WebSocket`, async () => {
    for (let index = 0; index < 3; index++) {
      const created = await carrierd(["keys", "create", "--name", `cli-${index}`, "--scope", "chat", "--scope", "events", "--json", ...setup.cliFlags], {
        env: cleanEnv(),
      });
      expect(created.code, created.stderr).toBe(0);
      const { secret } = JSON.parse(created.stdout) as { secret: string };
      for (const gateway of setup.gateways) expect(await modelsStatus(gateway, secret)).toBe(200);
    }
    // the WebSocket: by header, and by auth message with a subscribe sent right behind it
    const byHeader = await createKey(setup.cli, "ws-header");
    const byMessage = await createKey(setup.cli, "ws-message");
    const gateway = setup.gateways.at(-1)!;
    for (const [secret, auth] of [
      [byHeader, "header"],
      [byMessage, "message"],
    ] as const) {
      const events = await openEvents(gateway, { key: secret, auth });
      await events.subscribe({ sessions: ["*"] });
      events.close();
    }
  });

  test(`${backend}: a flood of wrong keys reads the store once per distinct key, then not at all`, async () => {
    const gateway = setup.gateways[0]!;
    const { unknown: unknownBefore, remembered: rememberedBefore } = { ...keyRingOf(gateway).lookups };
    const lookups = vi.spyOn(storageOf(gateway).keys, "list");
    try {
      const wrong = Array.from({ length: 40 }, () => newSecret());
      for (let round = 0; round < 3; round++) {
        const statuses = await Promise.all(wrong.flatMap((secret) => [modelsStatus(gateway, secret), modelsStatus(gateway, secret)]));
        expect(new Set(statuses)).toEqual(new Set([401]));
      }
      // the key ring's own poll lists every key (no hashes): only reads by hash count here
      const byHash = lookups.mock.calls.filter(([query]) => query?.secretHashes !== undefined);
      const asked = byHash.flatMap(([query]) => query?.secretHashes ?? []);
      // 240 refused requests: each distinct hash asked for once, in reads that never overlap
      expect(asked.length).toBe(40);
      expect(new Set(asked).size).toBe(40);
      expect(byHash.length).toBeLessThanOrEqual(40);
      expect(keyRingOf(gateway).rememberedUnknown).toBeGreaterThanOrEqual(40);
      // an operator sees it: 40 asked for and unknown; rounds 2 and 3 refused from memory (round 1's second request of a key may have shared the read)
      const metrics = await (await fetch(`${gateway.url}/metrics`, { headers: bearer(gateway.key) })).text();
      const count = (result: string) => Number(new RegExp(`^carrierd_key_lookups_total\\{result="${result}"\\} (\\d+)$`, "m").exec(metrics)?.[1]);
      expect(count("unknown") - unknownBefore).toBe(40);
      expect(count("remembered") - rememberedBefore).toBeGreaterThanOrEqual(160);
      expect(count("remembered") - rememberedBefore).toBeLessThanOrEqual(200);
    } finally {
      lookups.mockRestore();
    }
  });

  test(`${backend}: a revocation is in force on every instance within one second; a revoked key is not brought back by a lookup`, async () => {
    const secret = await createKey(setup.cli, "to-revoke");
    for (const gateway of setup.gateways) expect(await modelsStatus(gateway, secret)).toBe(200);
    await setup.cli.keys.update({ revoke: "to-revoke" }); // nothing tells the gateways: each learns of it by its own poll
    const revokedAt = performance.now();
    await Promise.all(
      setup.gateways.map(async (gateway) => {
        while ((await modelsStatus(gateway, secret)) !== 401) expect(performance.now() - revokedAt).toBeLessThan(1000);
      }),
    );
    // created and revoked before any gateway saw it: the lookup finds it revoked, and it is refused
    const stillborn = await createKey(setup.cli, "stillborn");
    await setup.cli.keys.update({ revoke: "stillborn" });
    for (const gateway of setup.gateways) expect(await modelsStatus(gateway, stillborn)).toBe(401);
  });
}

describe("SQLite", () => suite("SQLite", sqliteSetup));

announceSkipped("test/keys/new-key-at-once.test.ts", 4);
describe.skipIf(pgSkipReason() !== undefined)("PostgreSQL", () => suite("PostgreSQL", postgresSetup));

import "reflect-metadata";
import { describe } from "vitest";
import { openPostgresStorage } from "../../src/storage/postgres/postgres-storage.js";
import { announceSkipped, freshSchema, pgSkipReason } from "../support/postgres.js";
import { storageContract, type StorageFactory } from "./contract.js";
import { promptHeadContract } from "./prompt-heads-contract.js";

announceSkipped("test/storage/postgres.contract.test.ts", 24);
// a state is a schema of the run's database: the gateway and a CLI command open it alike, each with its own pool
describe.skipIf(pgSkipReason() !== undefined)("PostgreSQL", () => {
  const postgresState: StorageFactory = async () => {
    const schema = await freshSchema();
    return {
      open: async () => openPostgresStorage({ url: schema.url, poolSize: 2 }),
      committed: async () => {}, // every write is committed when it resolves
      dispose: schema.drop,
    };
  };
  storageContract("postgres", postgresState);
  promptHeadContract("postgres", postgresState);
});

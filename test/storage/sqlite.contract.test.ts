import "reflect-metadata";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteStorage } from "../../src/storage/sqlite/open-sqlite-storage.js";
import { SqliteStorage } from "../../src/storage/sqlite/sqlite-storage.js";
import { captureLog } from "../support/captured-log.js";
import { storageContract, type StorageFactory } from "./contract.js";
import { promptHeadContract } from "./prompt-heads-contract.js";

// a state is a $CARRIERD_HOME: the gateway opens it with its journal and background checkpoints, the CLI without
const sqliteState: StorageFactory = async () => {
  const home = mkdtempSync(join(tmpdir(), "carrierd-contract-"));
  return {
    open: async (role) => openSqliteStorage({ home, gateway: role === "gateway" ? { log: captureLog().logger } : undefined }),
    committed: (storage) => (storage instanceof SqliteStorage ? storage.committed() : Promise.resolve()),
    dispose: async () => rmSync(home, { recursive: true, force: true }),
  };
};
storageContract("sqlite", sqliteState);
promptHeadContract("sqlite", sqliteState);

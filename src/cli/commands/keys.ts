import type { CommandModule } from "yargs";
import { checkKeySpec } from "../../http/keys/key-spec.js";
import { newDataScope, newSecret, secretHash } from "../../http/keys/secret.js";
import { KeyExistsError, type StoredKey } from "../../storage/keys.js";
import { withState } from "./with-state.js";

interface KeysFlags {
  home?: string;
  name?: string;
  scope?: string[];
  models?: string[];
  expires?: string;
  "events-of"?: string[];
  json?: boolean;
}

/** `keys list --json`, one key: everything but the secret (only its hash is stored, and that is not shown either). */
function keyJson(key: StoredKey, now: number) {
  return {
    name: key.name,
    scopes: key.scopes,
    models: key.models,
    events_of: key.eventsOf,
    status: key.revokedAt !== null ? "revoked" : key.expiresAt !== null && key.expiresAt <= now ? "expired" : "active",
    created_at: iso(key.createdAt),
    expires_at: iso(key.expiresAt),
    revoked_at: iso(key.revokedAt),
    rotated_at: iso(key.rotatedAt),
    last_used_at: iso(key.lastUsedAt),
    requests: key.requests,
  };
}

function iso(time: number | null): string | null {
  return time === null ? null : new Date(time).toISOString();
}

function fail(message: string): void {
  console.error(`carrierd keys: ${message}`);
  process.exitCode = 1;
}

/** Prints a new secret: the only time it is shown. */
function printSecret(name: string, secret: string, json: boolean | undefined): void {
  if (json) return console.log(JSON.stringify({ name, secret }));
  console.log(`${secret}\n`);
  console.error(`the secret of key "${name}" is shown once: give it to its client now (only its hash is stored)`);
}

export const keysCommand: CommandModule<object, KeysFlags> = {
  command: "keys <action>",
  describe: "access keys: one per client, scoped, revocable without a restart (docs/operators.md)",
  builder: (yargs) =>
    yargs
      .command<KeysFlags>({
        command: "create",
        describe: "create a key and print its secret once",
        builder: (y) =>
          y
            .option("name", { type: "string", demandOption: true, describe: "the key's name (metrics and keys list show it)" })
            .option("scope", { type: "string", array: true, default: [], describe: "chat, events, admin (repeat; default chat)" })
            .option("models", { type: "string", array: true, default: [], describe: "model names or globs it may call (default: every model)" })
            .option("expires", { type: "string", describe: "date or time after which it is refused" })
            .option("events-of", { type: "string", array: true, default: [], describe: "names of the keys whose events an events key sees (default: its own)" })
            .option("json", { type: "boolean", default: false }),
        handler: (flags) =>
          withState(flags, async (storage) => {
            const spec = checkKeySpec({
              name: flags.name ?? "",
              scopes: flags.scope ?? [],
              models: flags.models ?? [],
              eventsOf: flags["events-of"] ?? [],
              expires: flags.expires,
            });
            if ("problem" in spec) return fail(spec.problem);
            const secret = newSecret();
            try {
              await storage.keys.update({ create: { ...spec, secretHash: secretHash(secret), dataScope: newDataScope(), createdAt: Date.now() } });
            } catch (error) {
              if (error instanceof KeyExistsError) return fail(error.message);
              throw error;
            }
            printSecret(spec.name, secret, flags.json);
          }),
      })
      .command<KeysFlags>({
        command: "list",
        describe: "keys with scopes, status, created, last used and request count (never a secret)",
        builder: (y) => y.option("json", { type: "boolean", default: false }),
        handler: (flags) =>
          withState(flags, async (storage) => {
            const now = Date.now();
            const keys = ((await storage.keys.list()).keys ?? []).map((key) => keyJson(key, now));
            if (flags.json) return console.log(JSON.stringify(keys, null, 2));
            if (keys.length === 0) return console.log("no access keys (the owner key in api_key or CARRIERD_API_KEY is the only one)");
            for (const key of keys) {
              const models = key.models.length > 0 ? ` models ${key.models.join(",")}` : "";
              console.log(
                `${key.name} [${key.scopes.join(",")}]${models} ${key.status}, created ${key.created_at}, last used ${key.last_used_at ?? "never"}, ${key.requests} request(s)`,
              );
            }
          }),
      })
      .command<KeysFlags & { target?: string }>({
        command: "revoke <target>",
        describe: "revoke a key: refused on its next request on every gateway within a second, its WebSockets closed",
        builder: (y) => y.positional("target", { type: "string", describe: "the key's name" }),
        handler: (flags) =>
          withState(flags, async (storage) => {
            if (!(await storage.keys.update({ revoke: flags.target ?? "" }))) return fail(`no active key named "${flags.target}"`);
            console.log(`revoked key "${flags.target}"`);
          }),
      })
      .command<KeysFlags & { target?: string }>({
        command: "rotate <target>",
        describe: "give a key a new secret (printed once); the old one stops working, the key keeps its sessions and responses",
        builder: (y) => y.positional("target", { type: "string", describe: "the key's name" }).option("json", { type: "boolean", default: false }),
        handler: (flags) =>
          withState(flags, async (storage) => {
            const secret = newSecret();
            if (!(await storage.keys.update({ rotate: flags.target ?? "", secretHash: secretHash(secret) })))
              return fail(`no active key named "${flags.target}"`);
            printSecret(flags.target ?? "", secret, flags.json);
          }),
      })
      .demandCommand(1),
  handler: () => undefined,
};

import { KEY_RING } from "../../src/foundation/container/tokens.js";
import type { Gateway } from "../../src/gateway/start-gateway.js";
import type { KeyRing } from "../../src/http/keys/key-ring.js";
import { newDataScope, newSecret, secretHash } from "../../src/http/keys/secret.js";
import type { KeyScope } from "../../src/storage/keys.js";
import { storageOf } from "../support/gateway.js";

export function keyRingOf(gateway: Gateway): KeyRing {
  return gateway.container.resolve<KeyRing>(KEY_RING);
}

/** Creates an access key in the gateway's store, in force on return (the ring has reloaded); resolves with its secret. */
export async function addKey(
  gateway: Gateway,
  name: string,
  options: { scopes?: KeyScope[]; models?: string[]; eventsOf?: string[]; expiresAt?: number | null } = {},
): Promise<string> {
  const secret = newSecret();
  await storageOf(gateway).keys.update({
    create: {
      name,
      secretHash: secretHash(secret),
      dataScope: newDataScope(),
      scopes: options.scopes ?? ["chat"],
      models: options.models ?? [],
      eventsOf: options.eventsOf ?? [],
      createdAt: Date.now(),
      expiresAt: options.expiresAt ?? null,
    },
  });
  await keyRingOf(gateway).refresh();
  return secret;
}

export async function revokeKey(gateway: Gateway, name: string): Promise<void> {
  await storageOf(gateway).keys.update({ revoke: name });
  await keyRingOf(gateway).refresh();
}

export const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });

/**
 * A gate a test closes and opens: while it is held, an emulator's answers
 * wait at it (a stream after its reasoning — or, for late carriers, after
 * its text —, a whole answer before its first byte), so the test can act
 * while a turn is at its upstream.
 */
export class Hold {
  private gate: Promise<void> | undefined;
  private open: (() => void) | undefined;
  private waiting = resolvers();

  hold(): void {
    this.gate = new Promise<void>((open) => (this.open = open));
    this.waiting = resolvers();
  }

  release(): void {
    this.gate = undefined;
    this.open?.();
  }

  /** Resolves at once when not held, else when released. */
  passage(): Promise<void> {
    if (this.gate) this.waiting.resolve();
    return this.gate ?? Promise.resolve();
  }

  /** Resolves once an answer waits at the gate closed by the last `hold()`. */
  reached(): Promise<void> {
    return this.waiting.promise;
  }
}

/** A promise and the function that resolves it (Promise.withResolvers, which Node 20 lacks). */
function resolvers(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

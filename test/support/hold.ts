/**
 * A gate a test closes and opens: while it is held, an emulator's answers
 * wait at it (a stream after its reasoning, a whole answer before its first
 * byte), so the test can act while a turn is at its upstream.
 */
export class Hold {
  private gate: Promise<void> | undefined;
  private open: (() => void) | undefined;

  hold(): void {
    this.gate = new Promise<void>((open) => (this.open = open));
  }

  release(): void {
    this.gate = undefined;
    this.open?.();
  }

  /** Resolves at once when not held, else when released. */
  passage(): Promise<void> {
    return this.gate ?? Promise.resolve();
  }
}

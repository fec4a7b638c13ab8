import type { UpstreamCall } from "../contract.js";

/**
 * "The client went away": what aborts a request's upstream call. The core's
 * transport watches it directly; an AbortSignal (what the plugin contract
 * offers as `call.signal`) is made only when someone reads it, because one
 * per request costs CPU for a signal that almost never fires.
 */
export class Cancellation {
  private controller: AbortController | undefined;
  private listeners: (() => void)[] | undefined;
  private done = false;

  /** One that fires when `signal` aborts (a timeout, a caller's own signal). */
  static of(signal: AbortSignal): Cancellation {
    const cancellation = new Cancellation();
    if (signal.aborted) cancellation.cancel();
    else signal.addEventListener("abort", () => cancellation.cancel(), { once: true });
    return cancellation;
  }

  get cancelled(): boolean {
    return this.done;
  }

  cancel(): void {
    if (this.done) return;
    this.done = true;
    this.controller?.abort();
    const listeners = this.listeners ?? [];
    this.listeners = undefined;
    for (const listener of listeners) listener();
  }

  /** Runs `listener` once on cancel (at once when already cancelled); returns what stops watching. */
  onCancel(listener: () => void): () => void {
    if (this.done) {
      listener();
      return () => undefined;
    }
    (this.listeners ??= []).push(listener);
    return () => {
      const index = this.listeners?.indexOf(listener) ?? -1;
      if (index >= 0) this.listeners!.splice(index, 1);
    };
  }

  /** The same, as an AbortSignal: made on first use, already aborted when the client is gone. */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.done) this.controller.abort();
    }
    return this.controller.signal;
  }
}

/** Calls built by the core carry their cancellation here, so the transport never needs the call's AbortSignal. */
const ofCall = new WeakMap<object, Cancellation>();

/**
 * `signal` for every call the core builds: an own, enumerable property (a
 * plugin's `{ ...call }` copies it), whose AbortSignal is made only if a
 * plugin reads it. One getter shared by all calls, never a closure per
 * call, so no call's accessor keeps its request alive
 * (docs/performance.md#what-a-waiting-turn-holds).
 */
const LAZY_SIGNAL: PropertyDescriptor = {
  get(this: object): AbortSignal {
    return ofCall.get(this)!.signal;
  },
  enumerable: true,
  configurable: true,
};

/** `call` with its cancellation and a lazy `signal` (see LAZY_SIGNAL). */
export function withCancellation<C extends Omit<UpstreamCall, "signal">>(call: C, cancellation: Cancellation): C & UpstreamCall {
  ofCall.set(call, cancellation);
  return Object.defineProperty(call, "signal", LAZY_SIGNAL) as C & UpstreamCall;
}

/** The call's cancellation, or one made from its `signal` (a plugin may hand the transport a call of its own). */
export function cancellationOf(call: UpstreamCall): Cancellation {
  return ofCall.get(call) ?? Cancellation.of(call.signal);
}

import { Worker } from "node:worker_threads";
import { checkRoutes, type CheckResult, type RouteProblem } from "./load-routes.js";

/** A parse this long is given up and the file rejected: the limits should make it impossible, but a worker must not hang a reload. */
const PARSE_TIMEOUT_MS = 10_000;
/** Heap for the parse worker: a capped file's tree fits many times over, and a runaway parse dies of it instead of growing the gateway. */
const WORKER_HEAP_MB = 256;

/** The outcome of one parse: checked, or given up because a newer save or a shutdown came first. */
export type ParseOutcome = CheckResult | { ok: false; superseded: true; problems: RouteProblem[] };

/**
 * Parses and validates route tables on a worker thread, so a large or
 * hostile file never stalls requests (a 1 MiB YAML file takes seconds to
 * parse). One parse at a time; `cancel` ends one in progress by ending its
 * worker, which the next parse replaces. Where this module runs as
 * TypeScript (the test runner), there is no compiled worker to start, and
 * the same check runs in the calling thread.
 */
export class RouteParser {
  private worker: Worker | undefined;
  private inFlight: { id: number; file: string; settle: (outcome: ParseOutcome) => void; timer: NodeJS.Timeout } | undefined;
  private nextId = 0;
  private readonly workerUrl = new URL("./parse-worker.js", import.meta.url);
  private readonly threaded = import.meta.url.endsWith(".js");

  constructor(private readonly knownPlugins: ReadonlySet<string>) {}

  parse(text: string, file: string): Promise<ParseOutcome> {
    if (!this.threaded) return Promise.resolve(checkRoutes(text, file, { knownPlugins: this.knownPlugins }));
    this.cancel();
    const worker = this.ensureWorker();
    const id = this.nextId++;
    return new Promise<ParseOutcome>((resolve) => {
      const timer = setTimeout(() => {
        this.endWorker();
        this.inFlight?.settle(failed(file, `parsing took longer than ${PARSE_TIMEOUT_MS / 1000} s; rejected`));
      }, PARSE_TIMEOUT_MS);
      timer.unref();
      this.inFlight = {
        id,
        file,
        timer,
        settle: (outcome) => {
          clearTimeout(timer);
          this.inFlight = undefined;
          resolve(outcome);
        },
      };
      worker.postMessage({ id, text, file, knownPlugins: [...this.knownPlugins] });
    });
  }

  /** Gives up the parse in progress, if any; it resolves as superseded. */
  cancel(): void {
    if (!this.inFlight) return;
    const { settle } = this.inFlight;
    this.endWorker();
    settle({ ok: false, superseded: true, problems: [] });
  }

  close(): void {
    this.cancel();
    this.endWorker();
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(this.workerUrl, { resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } });
    worker.unref();
    worker.on("message", (reply: { id: number; result?: CheckResult; error?: string }) => {
      if (this.inFlight?.id !== reply.id) return;
      this.inFlight.settle(reply.result ?? failed(this.inFlight.file, `could not be parsed: ${reply.error}`));
    });
    // out of memory, or any crash: the parse in flight is rejected, and the next parse starts a new worker
    const lost = (reason: string) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      if (this.inFlight) this.inFlight.settle(failed(this.inFlight.file, `could not be parsed: ${reason}`));
    };
    worker.on("error", (error) => lost(error.message));
    worker.on("exit", (code) => lost(`the parse worker exited (${code})`));
    this.worker = worker;
    return worker;
  }

  private endWorker(): void {
    const worker = this.worker;
    this.worker = undefined;
    if (worker) {
      worker.removeAllListeners();
      worker.on("error", () => undefined);
      void worker.terminate();
    }
  }
}

function failed(file: string, message: string): CheckResult {
  return { ok: false, problems: [{ file, line: 1, column: 1, message }] };
}

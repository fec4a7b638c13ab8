import type { IncomingMessage } from "node:http";
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span, type TextMapPropagator, type Tracer } from "@opentelemetry/api";
import type { GenAiMetrics } from "./genai-metrics.js";
import { forgetTurn, type ReplayDecision, type RequestTrace, type RetryCause, type UpstreamTarget } from "./trace-hooks.js";
import { readObject } from "../util/json-readers.js";
import type { GatewayEvent } from "../event-bus/event-bus.js";

/** What every request's spans are made with: the gateway's tracer, propagator, metrics and the content opt-in. */
export interface SpanMaking {
  readonly tracer: Tracer;
  readonly propagator: TextMapPropagator;
  readonly metrics: GenAiMetrics;
  readonly captureContent: boolean;
}

const HEADER_GETTER = {
  keys: (carrier: IncomingMessage["headers"]) => Object.keys(carrier),
  get: (carrier: IncomingMessage["headers"], key: string) => carrier[key],
};
const HEADER_SETTER = {
  set: (carrier: Record<string, string>, key: string, value: string) => {
    carrier[key] = value;
  },
};

/**
 * One request's spans: the server span (continuing the client's
 * `traceparent`), and under it the store read, each upstream attempt and
 * the durable commit. The turn's facts come from the event bus
 * (`turnStarted`, `turnEnded`, …) and from the pipeline's hooks
 * (trace-hooks.ts); the span is named `chat {model}` once a turn started.
 * Message contents and reasoning are set only with `captureContent`.
 */
export class RequestSpans implements RequestTrace {
  readonly server: Span;
  private readonly context: Context;
  private readonly started = performance.now();
  private readonly method: string;
  private upstream: UpstreamTarget | undefined;
  private attemptSpan: Span | undefined;
  private attemptContext: Context | undefined;
  private attempts = 0;
  private firstSentAt: number | undefined;
  private sentAt = 0;
  private clientModel: string | undefined;
  private tokenSeen = false;
  private output: { reasoning: string; text: string } | undefined;
  /** The turns of this request whose events find it (trace-hooks' byTurn), forgotten when it ends at the latest. */
  private readonly turns: string[] = [];

  constructor(
    private readonly making: SpanMaking,
    request: IncomingMessage,
  ) {
    const parent = making.propagator.extract(ROOT_CONTEXT, request.headers, HEADER_GETTER);
    const method = (this.method = request.method ?? "GET");
    this.server = making.tracer.startSpan(
      method,
      { kind: SpanKind.SERVER, attributes: { "http.request.method": method, "url.path": (request.url ?? "/").split("?")[0] } },
      parent,
    );
    this.context = trace.setSpan(parent, this.server);
    if (making.captureContent) this.output = { reasoning: "", text: "" };
  }

  storeRead<T>(read: Promise<T>): Promise<T> {
    return this.child("carrierd.store.read", read);
  }

  commit<T>(write: Promise<T>): Promise<T> {
    return this.child("carrierd.store.commit", write);
  }

  attempt(upstream: UpstreamTarget, retry: RetryCause | undefined): void {
    if (retry && this.attemptSpan) {
      this.attemptSpan.setAttributes({ "http.response.status_code": retry.refusedStatus, "error.type": "unknown_field" });
      this.attemptSpan.setStatus({ code: SpanStatusCode.ERROR, message: `refused fields: ${retry.dropped.join(", ")}` });
    }
    this.endAttempt();
    this.upstream = upstream;
    this.attempts++;
    this.sentAt = performance.now();
    this.firstSentAt ??= this.sentAt;
    const attributes: Record<string, string | number | string[]> = {
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": upstream.provider,
      "gen_ai.request.model": upstream.model,
      "server.address": upstream.host,
      "carrierd.upstream.attempt": this.attempts,
    };
    if (retry) {
      attributes["carrierd.retry.reason"] = "unknown_field";
      attributes["carrierd.retry.dropped_fields"] = [...retry.dropped];
    }
    this.attemptSpan = this.making.tracer.startSpan(`chat ${upstream.model}`, { kind: SpanKind.CLIENT, attributes }, this.context);
    this.attemptContext = trace.setSpan(this.context, this.attemptSpan);
  }

  replay(turnId: string, plan: ReplayDecision, messages: readonly unknown[]): void {
    this.turns.push(turnId);
    const attached = new Set<string>();
    for (const message of plan.firstAttached) for (const field of message.fields) attached.add(field);
    this.server.setAttributes({
      "carrierd.replay.turns_matched": plan.match.turnIds.size,
      "carrierd.replay.fields_attached": [...attached],
      "carrierd.replay.messages_attached": plan.firstAttached.length,
      "carrierd.replay.fields_effective": [...plan.effective],
      "carrierd.replay.verdict_applied": plan.rejected.length > 0,
      "carrierd.replay.fields_left_out": [...plan.rejected],
    });
    if (this.making.captureContent) this.server.setAttribute("gen_ai.input.messages", inputMessages(messages));
  }

  propagate(headers: Record<string, string>): Record<string, string> {
    const carried = { ...headers };
    this.making.propagator.inject(this.attemptContext ?? this.context, carried, HEADER_SETTER);
    return carried;
  }

  /** turn.started: the upstream answered; the request is a chat of this model. */
  turnStarted(event: Readonly<Record<string, unknown>>): void {
    this.clientModel = typeof event.model === "string" ? event.model : this.clientModel;
    this.server.updateName(`chat ${this.clientModel ?? ""}`.trim());
    this.server.setAttributes({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": stringOr(event.provider, this.upstream?.provider ?? ""),
      "gen_ai.request.model": this.clientModel ?? "",
      "gen_ai.response.model": stringOr(event.upstream_model, this.upstream?.model ?? ""),
    });
    this.attemptSpan?.setAttribute("http.response.status_code", 200);
  }

  /** A turn's first token (reasoning or answer): the time-to-first-token metrics. */
  firstToken(): void {
    if (this.tokenSeen) return;
    this.tokenSeen = true;
    const now = performance.now();
    this.making.metrics.firstToken(this.metricAttributes(), (now - this.sentAt) / 1000, (now - this.started) / 1000);
  }

  /** With captureContent: every delta, kept for the output messages. */
  delta(kind: "reasoning" | "text", text: unknown): void {
    if (this.output && typeof text === "string") this.output[kind] += text;
  }

  /** turn.completed or turn.failed. */
  turnEnded(event: Readonly<GatewayEvent>): void {
    const usage = event.usage;
    const input = typeof usage?.prompt_tokens === "number" ? usage.prompt_tokens : undefined;
    const output = typeof usage?.completion_tokens === "number" ? usage.completion_tokens : undefined;
    if (input !== undefined) this.server.setAttribute("gen_ai.usage.input_tokens", input);
    if (output !== undefined) this.server.setAttribute("gen_ai.usage.output_tokens", output);
    if (typeof event.finish_reason === "string") this.server.setAttribute("gen_ai.response.finish_reasons", [event.finish_reason]);
    const failed = event.type === "turn.failed";
    if (failed) {
      const message = event.error?.message;
      this.server.setStatus({ code: SpanStatusCode.ERROR, message: typeof message === "string" ? message : "turn failed" });
      this.server.setAttribute("error.type", "turn_failed");
      this.attemptSpan?.setStatus({ code: SpanStatusCode.ERROR });
    }
    if (this.output)
      this.server.setAttribute(
        "gen_ai.output.messages",
        JSON.stringify([{ role: "assistant", parts: outputParts(this.output), finish_reason: event.finish_reason ?? null }]),
      );
    const attributes = this.metricAttributes();
    if (failed) attributes["error.type"] = "turn_failed";
    if (this.firstSentAt !== undefined) this.making.metrics.operation(attributes, (performance.now() - this.firstSentAt) / 1000, input, output);
    this.endAttempt();
    if (typeof event.turn_id === "string") forgetTurn(event.turn_id);
  }

  /** The response is finished: the server span ends with its status. */
  responded(route: string, status: number): void {
    this.endAttempt();
    for (const turnId of this.turns) forgetTurn(turnId);
    this.server.setAttributes({ "http.route": route, "http.response.status_code": status });
    if (this.clientModel === undefined) this.server.updateName(`${this.method} ${route}`);
    if (status >= 500) {
      this.server.setStatus({ code: SpanStatusCode.ERROR });
      this.server.setAttribute("error.type", String(status));
    }
    this.server.end();
  }

  private metricAttributes(): Record<string, string> {
    return {
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": this.upstream?.provider ?? "",
      "gen_ai.request.model": this.clientModel ?? this.upstream?.model ?? "",
      "gen_ai.response.model": this.upstream?.model ?? "",
    };
  }

  private endAttempt(): void {
    this.attemptSpan?.end();
    this.attemptSpan = undefined;
  }

  private child<T>(name: string, work: Promise<T>): Promise<T> {
    const span = this.making.tracer.startSpan(name, { kind: SpanKind.INTERNAL }, this.context);
    work.then(
      () => span.end(),
      (error: unknown) => {
        span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
        span.end();
      },
    );
    return work;
  }
}

/** Chat messages in the GenAI conventions' shape: a role and its parts. */
function inputMessages(messages: readonly unknown[]): string {
  return JSON.stringify(
    messages.map((message) => {
      const { role, content } = readObject(message) ?? {};
      return { role, parts: [{ type: "text", content: typeof content === "string" ? content : JSON.stringify(content ?? null) }] };
    }),
  );
}

function outputParts(output: { reasoning: string; text: string }): { type: string; content: string }[] {
  const parts: { type: string; content: string }[] = [];
  if (output.reasoning) parts.push({ type: "reasoning", content: output.reasoning });
  parts.push({ type: "text", content: output.text });
  return parts;
}

function stringOr(value: unknown, otherwise: string): string {
  return typeof value === "string" ? value : otherwise;
}

import type { Histogram, Meter } from "@opentelemetry/api";

/** Bucket boundaries the GenAI conventions advise for durations and time to first token, in seconds. */
const DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];
/** And for token counts. */
const TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];

type Attributes = Record<string, string>;

/**
 * The GenAI metrics (https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-metrics/):
 * carrierd is the client of its upstreams, and the server of its own clients.
 */
export class GenAiMetrics {
  private readonly duration: Histogram;
  private readonly tokens: Histogram;
  private readonly clientFirstChunk: Histogram;
  private readonly serverFirstToken: Histogram;

  constructor(meter: Meter) {
    this.duration = meter.createHistogram("gen_ai.client.operation.duration", {
      description: "GenAI operation duration: from the first upstream attempt to the turn's end",
      unit: "s",
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    });
    this.tokens = meter.createHistogram("gen_ai.client.token.usage", {
      description: "Number of input and output tokens used, as the upstream reported them",
      unit: "{token}",
      advice: { explicitBucketBoundaries: TOKEN_BUCKETS },
    });
    this.clientFirstChunk = meter.createHistogram("gen_ai.client.operation.time_to_first_chunk", {
      description: "Time from sending the request upstream to its first token (reasoning or answer)",
      unit: "s",
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    });
    this.serverFirstToken = meter.createHistogram("gen_ai.server.time_to_first_token", {
      description: "Time from the request's arrival at carrierd to its first token (reasoning or answer)",
      unit: "s",
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    });
  }

  operation(attributes: Attributes, seconds: number, input: number | undefined, output: number | undefined): void {
    this.duration.record(seconds, attributes);
    if (input !== undefined) this.tokens.record(input, { ...attributes, "gen_ai.token.type": "input" });
    if (output !== undefined) this.tokens.record(output, { ...attributes, "gen_ai.token.type": "output" });
  }

  firstToken(attributes: Attributes, sinceSent: number, sinceArrival: number): void {
    this.clientFirstChunk.record(sinceSent, attributes);
    this.serverFirstToken.record(sinceArrival, attributes);
  }
}

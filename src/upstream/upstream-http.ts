import { createParser, type EventSourceMessage } from "eventsource-parser";
import { Agent, request } from "undici";
import { GatewayError } from "../errors/gateway-error.js";
import type { HttpCodec, JsonObject, StreamPart, UpstreamCall, UpstreamResult } from "../plugins/contract.js";

/**
 * The core's HTTP transport for plugins: one keep-alive pool per origin
 * (undici), the SSE parser (eventsource-parser), and error bodies read
 * whole so the fallback can classify them before the client sees anything.
 */
export class UpstreamHttp {
  private readonly agent = new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 600_000, connections: 64, pipelining: 1 });

  async send(codec: HttpCodec, call: UpstreamCall): Promise<UpstreamResult> {
    const wire = codec.buildRequest(call);
    let response: Awaited<ReturnType<typeof request>>;
    try {
      response = await request(wire.url, {
        method: "POST",
        headers: wire.headers,
        body: wire.body,
        dispatcher: this.agent,
        signal: call.signal,
        headersTimeout: 300_000,
        bodyTimeout: 600_000,
      });
    } catch (error) {
      throw new GatewayError("upstream_unreachable", `upstream ${call.provider.id} is unreachable: ${(error as Error).message}`, null, { cause: error });
    }
    if (response.statusCode >= 400) {
      return { ok: false, status: response.statusCode, body: await response.body.text() };
    }
    if (!call.stream) {
      const text = await response.body.text();
      let parsed: JsonObject;
      try {
        parsed = JSON.parse(text) as JsonObject;
      } catch {
        throw new GatewayError("upstream_error", `upstream ${call.provider.id} answered with a body that is not JSON`, null, { status: 502 });
      }
      return { ok: true, parts: decodeWhole(codec, parsed) };
    }
    return { ok: true, parts: decodeStream(response.body, codec.createStreamDecoder()) };
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

/** Decoded when read, so a codec that refuses a body (an error inside a 200) fails the turn as an upstream error, not the request as a 500. */
async function* decodeWhole(codec: HttpCodec, body: JsonObject): AsyncIterable<readonly StreamPart[]> {
  yield codec.decodeResponse(body);
}

/** SSE bytes → events → canonical parts, one network chunk at a time: the parts of one chunk leave together. */
async function* decodeStream(body: AsyncIterable<Buffer>, decode: (event: { event?: string; data: string }) => StreamPart[]): AsyncIterable<readonly StreamPart[]> {
  let pending: StreamPart[] = [];
  // a codec throws for an error the upstream reports mid-stream; what arrived before it still goes out first
  let failure: { error: unknown } | undefined;
  const parser = createParser({
    onEvent(message: EventSourceMessage) {
      if (message.data === "[DONE]" || failure) return;
      try {
        const parts = decode({ event: message.event, data: message.data });
        for (const part of parts) pending.push(part);
      } catch (error) {
        failure = { error };
      }
    },
  });
  const decoder = new TextDecoder();
  for await (const chunk of body) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    if (pending.length > 0) {
      const ready = pending;
      pending = [];
      yield ready;
    }
    if (failure) throw failure.error;
  }
  parser.feed(decoder.decode());
  if (pending.length > 0) yield pending;
  if (failure) throw failure.error;
}

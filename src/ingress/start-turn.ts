import type { ServerResponse } from "node:http";
import type { ChatService, DoorRoute, TurnRun } from "../turn/chat-service.js";
import type { GatewayOptions } from "../foundation/config/options.js";
import { GatewayError, upstreamStreamError } from "../foundation/errors/gateway-error.js";
import { Cancellation } from "../providers/upstream/cancellation.js";
import { IncompleteStreamError, UnreadableChunkError, UpstreamReportedError, type CarriedRequest, type ChatRequest } from "../providers/contract.js";
import { clientPace } from "./client-pace.js";
import { FirstByteWait, type FailureFrame } from "./first-byte-wait.js";
import { noteModel, noteUpstream } from "../foundation/logging/access-log.js";
import type { ReplaySource } from "../storage/turns.js";
import { sessionName } from "../conversation/session-scope.js";
import { traceTurn } from "../foundation/tracing/trace-hooks.js";
import { errorMessage } from "../foundation/util/error-message.js";
import { requireHistory } from "./input-rule.js";

/** How a streaming client is served while its turn runs. */
export interface StreamingClient {
  readonly options: Pick<GatewayOptions, "keepaliveSeconds" | "streamBufferBytes" | "clientStallSeconds">;
  /** The stream's error event, for a failure after the stream was opened early to keep the client waiting. */
  readonly failureFrame: FailureFrame;
  /** The stream's keepalive while the upstream has not answered; an SSE comment when absent. */
  readonly keepaliveFrame?: Buffer;
}

/** Without options: a stream holds at most 1 MiB for its client, and a client that takes nothing for 30 s is cut off. */
export const DEFAULT_STREAM_BUFFER_BYTES = 1024 * 1024;
export const DEFAULT_CLIENT_STALL_SECONDS = 30;

/**
 * Starts a turn on behalf of an HTTP response, for both APIs: the upstream
 * call is aborted when the client goes away, X-Session-Id is set as soon as
 * the session is known (so an error answer names it too: docs/api.md#sessions-x-session-id), and a
 * streaming client gets keepalives while the upstream has not answered and
 * backpressure once it has. Not async itself: `request` is handed on at
 * once, not held while the upstream answers.
 */
export function startTurn(
  chat: ChatService,
  request: ChatRequest,
  response: ServerResponse,
  context: {
    keyHash: string;
    explicitSession: string | undefined;
    sessionScope: string | undefined;
    /** RequestContext.compacted */
    compacted?: boolean;
    stream: boolean;
    reread?: () => ChatRequest;
    client?: StreamingClient;
    /** RequestContext.sealed */
    sealed?: ReadonlyMap<number, ReplaySource> | undefined;
    /** RequestContext.carried */
    carried?: CarriedRequest;
    /** RequestContext.route */
    route?: DoorRoute;
  },
): Promise<TurnRun> {
  requireHistory(request.messages);
  const cancellation = new Cancellation();
  traceTurn(response, cancellation);
  response.on("close", () => {
    if (!response.writableFinished) cancellation.cancel();
  });
  const client = context.stream ? context.client : undefined;
  const options = client?.options;
  const pace = options
    ? clientPace(response, options.streamBufferBytes ?? DEFAULT_STREAM_BUFFER_BYTES, (options.clientStallSeconds ?? DEFAULT_CLIENT_STALL_SECONDS) * 1000)
    : undefined;
  const onSession = (sessionId: string) => {
    // the client knows its session by name, and so do its events and the access log (docs/sessions-and-replay.md)
    const name = sessionName(sessionId);
    if (!response.headersSent) response.setHeader("x-session-id", name);
    noteUpstream(response, name);
  };
  noteModel(response, request.model);
  const started = chat.start(request, {
    keyHash: context.keyHash,
    explicitSession: context.explicitSession,
    sessionScope: context.sessionScope,
    compacted: context.compacted,
    stream: context.stream,
    cancellation,
    reread: context.reread,
    onSession,
    pace,
    sealed: context.sealed,
    carried: context.carried,
    route: context.route,
  });
  if (!client) return started;
  const wait = new FirstByteWait(response, client.options.keepaliveSeconds * 1000, client.keepaliveFrame);
  return started.then(
    (run) => {
      wait.answered();
      return run;
    },
    (error: unknown) => {
      wait.failed(asUpstreamFailure(error), client.failureFrame);
      throw error;
    },
  );
}

/** What a turn that broke after it started becomes for the client. */
export function asUpstreamFailure(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  if (error instanceof IncompleteStreamError)
    return new GatewayError("upstream_stream_truncated", `${error.message}: the answer is incomplete`, null, { cause: error });
  if (error instanceof UnreadableChunkError)
    return new GatewayError("upstream_stream_corrupt", `${error.message}: the answer is incomplete`, null, { cause: error });
  if (error instanceof UpstreamReportedError) return upstreamStreamError(error.detail, error.message);
  if (error instanceof Error && error.name === "AbortError") return new GatewayError("upstream_error", "the request was cancelled");
  return new GatewayError("upstream_error", `upstream stream failed: ${errorMessage(error)}`, null, { status: 502 });
}

import type { ServerResponse } from "node:http";
import { sessionIdOf, type ChatService, type TurnRun } from "../chat/chat-service.js";
import { GatewayError } from "../errors/gateway-error.js";
import { Cancellation } from "../upstream/cancellation.js";
import type { ChatRequest } from "../plugins/contract.js";
import { noteModel, noteUpstream } from "../logging/access-log.js";

/**
 * Starts a turn on behalf of an HTTP response, for both APIs: the upstream
 * call is aborted when the client goes away, and an error raised once the
 * session was known still names it in X-Session-Id (SPEC §4). Not async
 * itself: `request` is handed on at once, not held while the upstream answers.
 */
export function startTurn(
  chat: ChatService,
  request: ChatRequest,
  response: ServerResponse,
  context: { sessionHeader: string | undefined; stream: boolean; reread?: () => ChatRequest },
): Promise<TurnRun> {
  const cancellation = new Cancellation();
  response.on("close", () => {
    if (!response.writableFinished) cancellation.cancel();
  });
  noteModel(response, request.model);
  return chat.start(request, { sessionHeader: context.sessionHeader, stream: context.stream, cancellation, reread: context.reread }).then(
    (run) => {
      noteUpstream(response, run.sessionId);
      return run;
    },
    (error: unknown) => {
      const sessionId = sessionIdOf(error);
      if (sessionId) {
        response.setHeader("x-session-id", sessionId);
        noteUpstream(response, sessionId);
      }
      throw error;
    },
  );
}

/** What a turn that broke after it started becomes for the client. */
export function asUpstreamFailure(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  if ((error as Error)?.name === "AbortError") return new GatewayError("upstream_error", "the request was cancelled");
  return new GatewayError("upstream_error", `upstream stream failed: ${(error as Error)?.message ?? String(error)}`, null, { status: 502 });
}

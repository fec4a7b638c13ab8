import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { EventBus } from "../foundation/event-bus/event-bus.js";
import { checkSessionId } from "../turn/sessions/session-id.js";
import type { GatewayOptions } from "../foundation/config/options.js";
import { GatewayError } from "../foundation/errors/gateway-error.js";
import { AccessLog } from "../foundation/logging/access-log.js";
import { noteModelOfUnreadBody } from "./refused-body.js";
import type { Logger } from "../foundation/logging/logger.js";
import type { Caller } from "./keys/caller.js";
import type { Identification, KeyRing } from "./keys/key-ring.js";
import type { KeyScope } from "../storage/keys.js";
import { requestKey } from "./auth.js";
import { applyCors } from "./cors.js";
import type { Endpoint, EndpointCall, EndpointTable } from "./endpoint-table.js";
import { requestTarget, type RequestTarget } from "./request-target.js";
import { sendError, type ErrorShape } from "./respond.js";
import { traceResponded, type RequestTracer } from "../foundation/tracing/trace-hooks.js";

/**
 * One finished request, as metrics see it: `route` is the matched
 * endpoint's path (or "unmatched"), never the raw URL; `key` the name of
 * the key it authenticated with ("" when none did).
 */
export type ResponseListener = (record: { method: string; route: string; status: number; key: string }) => void;

/** The HTTP front door: CORS, auth, the endpoint table, and errors in the shape of the endpoint asked for. */
export class HttpServer {
  readonly server: Server;
  private readonly responseListeners = new Set<ResponseListener>();
  private readonly accessLog: AccessLog;

  constructor(
    private readonly options: GatewayOptions,
    private readonly endpoints: EndpointTable,
    private readonly log: Logger,
    bus: EventBus,
    private readonly keys: KeyRing,
    private readonly tracer?: RequestTracer,
  ) {
    this.accessLog = new AccessLog(log, bus);
    this.server = createServer({ keepAliveTimeout: 65_000 }, (request, response) => void this.handle(request, response));
    this.server.on("clientError", (error: NodeJS.ErrnoException, socket) => answerUnparseable(error, socket, log, endpoints.errorShape));
    this.server.on("upgrade", (request: IncomingMessage, socket: Duplex, head: Buffer) => this.upgrade(request, socket, head));
  }

  /** Called after every response (request metrics); listeners must be cheap and must not throw. */
  onResponse(listener: ResponseListener): () => void {
    this.responseListeners.add(listener);
    return () => this.responseListeners.delete(listener);
  }

  async listen(): Promise<{ host: string; port: number; url: string }> {
    await new Promise<void>((resolve, reject) => {
      this.server.once("error", (error: NodeJS.ErrnoException) =>
        reject(error.code === "EADDRINUSE" ? new PortInUseError(this.options.host, this.options.port, error) : error),
      );
      this.server.listen(this.options.port, this.options.host, () => resolve());
    });
    const address = this.server.address();
    // a server listening on a TCP port has an address; a string is a pipe's, null a server not listening
    if (address === null || typeof address === "string") throw new Error("the server is not listening on a TCP port");
    const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
    return { host: address.address, port: address.port, url: `http://${host}:${address.port}` };
  }

  /** Stops accepting, lets open requests finish, then resolves. */
  async close(): Promise<void> {
    this.server.closeIdleConnections();
    // a keep-alive connection whose stream ends after this point would otherwise idle until the client drops it
    const sweep = setInterval(() => this.server.closeIdleConnections(), 100);
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    clearInterval(sweep);
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const started = performance.now();
    this.tracer?.began(request, response);
    let route = "unmatched";
    let caller: Caller | undefined;
    let errorShape: ErrorShape = this.endpoints.errorShape;
    try {
      const target = requestTarget(request);
      if (!target) throw new GatewayError("invalid_request", MALFORMED_TARGET);
      const { pathname } = target;
      const method = request.method ?? "GET";
      const match = this.endpoints.match(method, pathname);
      if (match.kind === "found") [route, errorShape] = [match.endpoint.path, match.endpoint.errorShape ?? errorShape];
      else if (match.kind === "wrong-method") [route, errorShape] = [match.path, match.served.errorShape ?? errorShape];
      if (applyCors(request, response, this.options.corsOrigins, errorShape) === "answered") return;
      if (match.kind === "found" && match.endpoint.probe) return await match.endpoint.handler(request, response, endpointCall(target, match.params));
      // an unknown path needs the key too: without it, nobody learns which paths exist; it may come in any wire API's header
      if (match.kind === "none") caller = await this.authenticate(request, { keyHeader: this.keyHeaderSent(request) }, target);
      else if (match.kind === "wrong-method")
        caller = await this.authenticate(request, { keyHeader: match.served.keyHeader, keyQuery: match.served.keyQuery }, target);
      else if (match.endpoint.auth) {
        const found = this.authenticate(request, match.endpoint, target);
        caller = found instanceof Promise ? await found : found; // a key the ring holds costs no turn of the microtask queue
      }
      // a malformed X-Session-Id is a 400 on every route, whatever else names the session (docs/api.md#sessions-x-session-id)
      const sessionHeader = request.headers["x-session-id"];
      if (sessionHeader !== undefined) checkSessionId(Array.isArray(sessionHeader) ? sessionHeader.join(", ") : sessionHeader);
      if (match.kind === "found") return await match.endpoint.handler(request, response, endpointCall(target, match.params, caller));
      if (match.kind === "wrong-method")
        throw new GatewayError("method_not_allowed", `${method} is not allowed on ${pathname}`, null, { headers: { allow: match.allowed.join(", ") } });
      throw new GatewayError("not_found", `no route for ${method} ${pathname}`);
    } catch (error) {
      if (!(error instanceof GatewayError)) this.log.error({ err: error, path: request.url }, "unexpected error while handling a request");
      else if (error.status >= 500) this.log.warn({ code: error.code, message: error.message, path: request.url }, "request failed");
      await noteModelOfUnreadBody(request, response);
      sendError(response, error, errorShape);
    } finally {
      // a stream's handler returns when it ended, so the line has its whole duration
      this.accessLog.write(request, response, started);
      traceResponded(response, route);
      if (this.responseListeners.size > 0) this.notifyResponse(request.method ?? "GET", route, response.statusCode, caller?.name ?? "");
    }
  }

  /** A WebSocket upgrade goes to the row of its path that takes upgrades; anywhere else it is a 404. */
  private upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    const pathname = requestTarget(request)?.pathname;
    const upgrade = pathname === undefined ? undefined : this.endpoints.upgradeAt(pathname);
    if (upgrade) return upgrade(request, socket, head);
    socket.on("error", () => socket.destroy());
    const shape = this.endpoints.errorShape;
    if (pathname === undefined) answerOnSocket(socket, 400, "Bad Request", new GatewayError("invalid_request", MALFORMED_TARGET), shape, this.log);
    else answerOnSocket(socket, 404, "Not Found", new GatewayError("not_found", `no WebSocket endpoint at ${pathname}`), shape, this.log, pathname);
  }

  private notifyResponse(method: string, route: string, status: number, key: string): void {
    const record = { method, route, status, key };
    for (const listener of this.responseListeners) {
      try {
        listener(record);
      } catch {
        // metrics must never break a response
      }
    }
  }

  /** The first header of the table's key headers the request sent (a Gemini client's x-goog-api-key on a path no row serves). */
  private keyHeaderSent(request: IncomingMessage): string | undefined {
    return this.endpoints.keyHeaders.find((name) => request.headers[name] !== undefined);
  }

  /**
   * The request's key, valid and holding the endpoint's scope; a 401 (missing, unknown, revoked, expired) or 403 otherwise.
   * A key the ring holds is answered without a promise (every request asks, and an `await` costs a turn of the
   * microtask queue); only a key it does not hold yet is looked up in the store.
   */
  private authenticate(
    request: IncomingMessage,
    endpoint: Pick<Endpoint, "scope" | "keyHeader" | "keyQuery"> | undefined,
    target: RequestTarget,
  ): Caller | Promise<Caller> {
    const keyQuery = endpoint?.keyQuery;
    const token = requestKey(request.headers, endpoint?.keyHeader, keyQuery ? { name: keyQuery, url: () => target.url } : undefined);
    const identified: Identification = this.keys.identify(token, Date.now(), request.socket);
    // a key this gateway does not hold yet (created a moment ago elsewhere) is looked up before it is refused
    if (!identified.ok && identified.reason === "unknown")
      return this.keys.identifyStored(token, Date.now(), request.socket).then((stored) => this.admitted(stored, endpoint));
    return this.admitted(identified, endpoint);
  }

  /** The caller a key identified, if its endpoint's scope is among the key's; else the refusal. */
  private admitted(identified: Identification, endpoint: Pick<Endpoint, "scope" | "keyHeader"> | undefined): Caller {
    const scope: KeyScope | undefined = endpoint?.scope;
    if (!identified.ok) {
      const message = REFUSED[identified.reason];
      // where the key may also come in another header, the message names it first (Anthropic's clients send x-api-key, Google's x-goog-api-key)
      throw new GatewayError(
        "invalid_api_key",
        identified.reason === "missing" && endpoint?.keyHeader ? message.replace("Send ", `Send ${endpoint.keyHeader}: <key> or `) : message,
      );
    }
    if (scope !== undefined && !identified.caller.scopes.has(scope)) {
      throw new GatewayError("insufficient_scope", `This key does not have the '${scope}' scope this endpoint needs (carrierd keys create --scope ${scope}).`);
    }
    return identified.caller;
  }
}

/** The port is taken: the message names the flag and the variable that choose another. */
export class PortInUseError extends Error {
  readonly code = "EADDRINUSE";
  constructor(host: string, port: number, cause: unknown) {
    super(
      `port ${port} on ${host} is already in use (another carrierd, or another server). Stop it, or choose another port with --port N or CARRIERD_PORT=N (0 picks a free one).`,
      { cause },
    );
    this.name = "PortInUseError";
  }
}

const REFUSED = {
  missing:
    "Missing API key. Send Authorization: Bearer <key> (the owner key is in $CARRIERD_HOME/api_key unless CARRIERD_API_KEY is set; `carrierd keys create` makes one per client).",
  unknown: "Invalid API key.",
  revoked: "This API key has been revoked.",
  expired: "This API key has expired.",
} as const;

const MALFORMED_TARGET = "malformed HTTP request: the request target is not a URL path";

/** What the handler is given; its URL is parsed only if it reads it (RequestTarget). */
function endpointCall(target: RequestTarget, params: EndpointCall["params"], caller?: Caller): EndpointCall {
  return {
    get url() {
      return target.url;
    },
    params,
    caller,
  };
}

/** A request Node cannot parse (bad request line, oversized headers) still gets an HTTP answer in the table's error shape, then the connection closes. */
function answerUnparseable(error: NodeJS.ErrnoException, socket: Duplex, log: Logger, shape: ErrorShape): void {
  if (error.code === "ECONNRESET" || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, text] = error.code === "HPE_HEADER_OVERFLOW" ? [431, "Request Header Fields Too Large"] : [400, "Bad Request"];
  answerOnSocket(socket, status, text, new GatewayError("invalid_request", `malformed HTTP request: ${text.toLowerCase()}`), shape, log);
}

/**
 * An answer written straight to the socket, where Node has no response
 * object to give (unparseable requests, refused upgrades); logged like an
 * access-log line, with what is known of the request.
 */
function answerOnSocket(socket: Duplex, status: number, reason: string, error: GatewayError, shape: ErrorShape, log: Logger, path: string | null = null): void {
  log.info({ method: null, path, model: null, status, duration_ms: 0, error_code: error.code, error_message: error.message }, "request");
  const body = JSON.stringify(shape(error).body);
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

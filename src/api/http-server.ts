import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { inject, injectable } from "tsyringe";
import { CHAT_SERVICE, EVENT_BUS, LOGGER, OPTIONS, ROUTE_SOURCE, STORAGE } from "../container/tokens.js";
import type { EventBus } from "../events/event-bus.js";
import { AccessLog } from "../logging/access-log.js";
import type { ChatService } from "../chat/chat-service.js";
import type { GatewayOptions } from "../config/options.js";
import { GatewayError, toOpenAIError } from "../errors/gateway-error.js";
import type { Logger } from "../logging/logger.js";
import type { RouteSource } from "../routes/route-source.js";
import type { Storage } from "../storage/storage.js";
import { storeHealth } from "./store-health.js";
import { bearerToken, keyMatches } from "./auth.js";
import { checkSessionId } from "../chat/session-id.js";
import { handleChatCompletions } from "./chat-completions.js";
import { applyCors } from "./cors.js";
import { capabilitiesBody, modelsBody } from "./discovery.js";
import { sendError, sendJson } from "./respond.js";

export type RouteHandler = (request: IncomingMessage, response: ServerResponse, url: URL) => Promise<void> | void;

/** A route other capabilities (responses, events, dashboard, metrics) add to the server. */
export interface ExtraRoute {
  method: string;
  /** Exact path, or a prefix when it ends with `/`. */
  path: string;
  auth: boolean;
  handler: RouteHandler;
}

/** Answered for any method and without auth. */
const HEALTH_PATHS = new Set(["/health", "/v1/health"]);
/** The server's own authenticated routes: another method on one of these is a 405, not a 404. */
const API_PATHS = new Set(["/v1/chat/completions", "/v1/models", "/v1/capabilities"]);

function routeMatches(route: ExtraRoute, pathname: string): boolean {
  return route.path.endsWith("/") ? pathname.startsWith(route.path) : route.path === pathname;
}

/** One finished request, as metrics see it: `route` is the matched route's path (or "unmatched"), never the raw URL. */
export type ResponseListener = (record: { method: string; route: string; status: number }) => void;

/** The HTTP front door: CORS, auth, routing, and errors in OpenAI shape. */
@injectable()
export class HttpServer {
  readonly server: Server;
  private readonly extraRoutes: ExtraRoute[] = [];
  private readonly responseListeners = new Set<ResponseListener>();
  private readonly accessLog: AccessLog;

  constructor(
    @inject(OPTIONS) private readonly options: GatewayOptions,
    @inject(ROUTE_SOURCE) private readonly routes: RouteSource,
    @inject(CHAT_SERVICE) private readonly chat: ChatService,
    @inject(LOGGER) private readonly log: Logger,
    @inject(EVENT_BUS) bus: EventBus,
    @inject(STORAGE) private readonly storage: Storage,
  ) {
    this.accessLog = new AccessLog(log, bus);
    this.server = createServer({ keepAliveTimeout: 65_000 }, (request, response) => void this.handle(request, response));
    this.server.on("clientError", (error: NodeJS.ErrnoException, socket) => answerUnparseable(error, socket));
  }

  addRoute(route: ExtraRoute): void {
    this.extraRoutes.push(route);
  }

  /** Called after every response (request metrics); listeners must be cheap and must not throw. */
  onResponse(listener: ResponseListener): () => void {
    this.responseListeners.add(listener);
    return () => this.responseListeners.delete(listener);
  }

  async listen(): Promise<{ host: string; port: number; url: string }> {
    await new Promise<void>((resolve, reject) => {
      this.server.once("error", (error: NodeJS.ErrnoException) => reject(error.code === "EADDRINUSE" ? new PortInUseError(this.options.host, this.options.port, error) : error));
      this.server.listen(this.options.port, this.options.host, () => resolve());
    });
    const address = this.server.address() as AddressInfo;
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
    try {
      if (applyCors(request, response, this.options.corsOrigins) === "answered") return;
      const url = new URL(request.url ?? "/", "http://carrierd.local");
      await this.route(request, response, url);
    } catch (error) {
      if (!(error instanceof GatewayError)) this.log.error({ err: error, path: request.url }, "unexpected error while handling a request");
      else if (error.status >= 500) this.log.warn({ code: error.code, message: error.message, path: request.url }, "request failed");
      sendError(response, error);
    } finally {
      // a stream's handler returns when it ended, so the line has its whole duration
      this.accessLog.write(request, response, started);
      if (this.responseListeners.size > 0) this.notifyResponse(request, response);
    }
  }

  private async route(request: IncomingMessage, response: ServerResponse, url: URL): Promise<void> {
    const { pathname } = url;
    const method = request.method ?? "GET";
    if (HEALTH_PATHS.has(pathname)) {
      // a shared store that does not answer makes the instance unhealthy: a load balancer drains it until the store is back
      const store = await storeHealth(this.storage);
      if (store === "unavailable") sendJson(response, 503, { status: "unavailable", store });
      else sendJson(response, 200, store === "local" ? { status: "ok" } : { status: "ok", store });
      return;
    }
    if (pathname === "/favicon.ico") {
      // browsers ask for it on every page of the dashboard; without a key it would be a 401 in their console
      response.writeHead(204, { "cache-control": "public, max-age=86400" });
      response.end();
      return;
    }
    const extra = this.extraRoutes.find((route) => route.method === method && routeMatches(route, pathname));
    if (extra?.auth !== false) this.authenticate(request);
    // a malformed X-Session-Id is a 400 on every route, whatever else names the session (SPEC §12.11)
    const sessionHeader = request.headers["x-session-id"];
    if (sessionHeader !== undefined) checkSessionId(Array.isArray(sessionHeader) ? sessionHeader.join(", ") : sessionHeader);
    if (extra) return extra.handler(request, response, url);
    switch (`${method} ${pathname}`) {
      case "POST /v1/chat/completions":
        return handleChatCompletions(request, response, this.chat, this.options, this.routes);
      case "GET /v1/models":
        return sendJson(response, 200, modelsBody(this.routes.current, this.options.env));
      case "GET /v1/capabilities":
        return sendJson(response, 200, capabilitiesBody(this.routes.current, this.options.store));
    }
    throw API_PATHS.has(pathname) ? new GatewayError("method_not_allowed", `${method} is not allowed on ${pathname}`) : new GatewayError("not_found", `no route for ${method} ${pathname}`);
  }

  private notifyResponse(request: IncomingMessage, response: ServerResponse): void {
    const method = request.method ?? "GET";
    const pathname = (request.url ?? "/").split("?")[0]!;
    const extra = this.extraRoutes.find((route) => routeMatches(route, pathname));
    const builtIn = HEALTH_PATHS.has(pathname) || API_PATHS.has(pathname);
    const record = { method, route: extra?.path ?? (builtIn ? pathname : "unmatched"), status: response.statusCode };
    for (const listener of this.responseListeners) {
      try {
        listener(record);
      } catch {
        // metrics must never break a response
      }
    }
  }

  private authenticate(request: IncomingMessage): void {
    if (!keyMatches(bearerToken(request.headers), this.options.apiKey)) {
      throw new GatewayError("invalid_api_key", "Invalid or missing API key. Send Authorization: Bearer <key> (the key is in $CARRIERD_HOME/api_key unless CARRIERD_API_KEY is set).");
    }
  }
}

/** The port is taken: the message names the flag and the variable that choose another. */
export class PortInUseError extends Error {
  readonly code = "EADDRINUSE";
  constructor(host: string, port: number, cause: unknown) {
    super(`port ${port} on ${host} is already in use (another carrierd, or another server). Stop it, or choose another port with --port N or CARRIERD_PORT=N (0 picks a free one).`, { cause });
    this.name = "PortInUseError";
  }
}

/** A request Node cannot parse (bad request line, oversized headers) still gets an HTTP answer in OpenAI shape, then the connection closes. */
function answerUnparseable(error: NodeJS.ErrnoException, socket: import("node:stream").Duplex): void {
  if (error.code === "ECONNRESET" || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, text] = error.code === "HPE_HEADER_OVERFLOW" ? [431, "Request Header Fields Too Large"] : [400, "Bad Request"];
  const body = JSON.stringify(toOpenAIError(new GatewayError("invalid_request", `malformed HTTP request: ${text.toLowerCase()}`)));
  socket.end(`HTTP/1.1 ${status} ${text}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

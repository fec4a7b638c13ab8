import type { ErrorShape } from "../../http/respond.js";
import type { GatewayError } from "../../foundation/errors/gateway-error.js";
import type { FailureFrame } from "../first-byte-wait.js";

/** Google's canonical status names (google.rpc.Code) by HTTP status, as the Gemini API answers them. */
const STATUS_BY_HTTP: Readonly<Record<number, string>> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  405: "UNIMPLEMENTED",
  408: "DEADLINE_EXCEEDED",
  409: "ABORTED",
  413: "INVALID_ARGUMENT",
  426: "FAILED_PRECONDITION",
  429: "RESOURCE_EXHAUSTED",
  499: "CANCELLED",
  500: "INTERNAL",
  501: "UNIMPLEMENTED",
  502: "UNAVAILABLE",
  503: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED",
};

/** An error's `status` as Google spells it: by HTTP status, INTERNAL or INVALID_ARGUMENT for one not listed. */
export function googleStatus(error: GatewayError): string {
  return STATUS_BY_HTTP[error.status] ?? (error.status >= 500 ? "INTERNAL" : "INVALID_ARGUMENT");
}

/** Google's `{"error":{code,message,status}}`, for the body of an answer and for a stream's error event alike. */
export function googleErrorBody(error: GatewayError): { error: { code: number; message: string; status: string } } {
  return { error: { code: error.status, message: error.message, status: googleStatus(error) } };
}

/** How the Gemini API's endpoints answer an error, those raised before their handler too (a refused key, a 413, a 405). */
export const googleErrorShape: ErrorShape = (error) => ({ status: error.status, body: googleErrorBody(error) });

/** A stream that failed: the error body as its last `data:` event, which Google's SDKs raise as an ApiError. */
export const geminiFailureFrame: FailureFrame = (failure) => `data: ${JSON.stringify(googleErrorBody(failure))}\n\n`;

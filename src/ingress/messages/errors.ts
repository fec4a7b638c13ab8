import type { ErrorShape } from "../../http/respond.js";
import type { GatewayError } from "../../foundation/errors/gateway-error.js";

/** Anthropic's error types by HTTP status (https://docs.anthropic.com/en/api/errors). */
const TYPE_BY_STATUS: Readonly<Record<number, string>> = {
  400: "invalid_request_error",
  401: "authentication_error",
  402: "billing_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  529: "overloaded_error",
};

/**
 * An error's type as Anthropic spells it: by status, as Anthropic's SDKs read
 * it, with carrierd's own codes where the status alone says too little (a
 * shared store that does not answer is `overloaded_error`: retry elsewhere).
 */
export function anthropicErrorType(error: GatewayError): string {
  if (error.code === "store_unavailable") return "overloaded_error";
  const byStatus = TYPE_BY_STATUS[error.status];
  if (byStatus) return byStatus;
  return error.status >= 500 ? "api_error" : "invalid_request_error";
}

/** Anthropic's `{"type":"error","error":{type,message}}`, for the body of an answer and for a stream's `error` event alike. */
export function anthropicErrorBody(error: GatewayError): { type: "error"; error: { type: string; message: string } } {
  return { type: "error", error: { type: anthropicErrorType(error), message: error.message } };
}

/** How the Messages API's endpoints answer an error, those raised before their handler too (a refused key, a 413, an unknown model). */
export const anthropicErrorShape: ErrorShape = (error) => ({ status: error.status, body: anthropicErrorBody(error) });

/** The bytes of a stream's `error` event. */
export function errorEvent(error: GatewayError): string {
  return `event: error\ndata: ${JSON.stringify(anthropicErrorBody(error))}\n\n`;
}

import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import chatSchema from "../../schemas/requests/chat-completions.schema.json" with { type: "json" };
import { GatewayError } from "../errors/gateway-error.js";

const ajv = new Ajv2020({ allErrors: false, strict: false });

/** Compiles a request-body schema into a checker that throws an OpenAI-shaped 400 naming the parameter. */
export function requestValidator<T>(schema: object): (body: unknown) => T {
  const validate: ValidateFunction = ajv.compile(schema);
  return (body) => {
    if (typeof body !== "object" || body === null || Array.isArray(body)) throw new GatewayError("invalid_request", "request body must be a JSON object");
    if (!validate(body)) throw toError(validate.errors?.[0]);
    return body as T;
  };
}

export const validateChatRequest = requestValidator<import("../plugins/contract.js").ChatRequest>(chatSchema);

function toError(error: ErrorObject | undefined): GatewayError {
  if (!error) return new GatewayError("invalid_request", "invalid request body");
  const path = error.instancePath
    .split("/")
    .slice(1)
    .map((segment) => (/^\d+$/.test(segment) ? `[${segment}]` : `.${segment}`))
    .join("")
    .replace(/^\./, "");
  const param = error.keyword === "required" ? [path, (error.params as { missingProperty: string }).missingProperty].filter(Boolean).join(".") : path || null;
  let message: string;
  switch (error.keyword) {
    case "required":
      message = `missing required parameter: '${param}'`;
      break;
    case "enum":
      message = `invalid value for '${path}': must be one of ${(error.params as { allowedValues: unknown[] }).allowedValues.map((v) => `'${String(v)}'`).join(", ")}`;
      break;
    case "minItems":
      message = `'${path}' must not be empty`;
      break;
    default:
      message = `invalid type or value for '${path || "body"}': ${error.message ?? "invalid"}`;
  }
  return new GatewayError("invalid_request", message, param);
}

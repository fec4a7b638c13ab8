import { Ajv2020, type ErrorObject } from "ajv/dist/2020.js";
import { GatewayError } from "../foundation/errors/gateway-error.js";
import { isKeywordError, type KeywordError } from "../foundation/util/ajv-errors.js";
import { checkInputList } from "./input-rule.js";

const ajv = new Ajv2020({ allErrors: false, strict: false });

/** How a door words the schema error it refuses a body for: the error ajv found, and the path of the value it names. */
export type SchemaWording = (error: ErrorObject, path: readonly string[]) => GatewayError;

/**
 * Compiles a request-body schema into a checker that throws a 400 (invalid_request) naming the parameter, worded as the door's API words it (OpenAI's by default).
 * `list`: the body's list of messages (input items), held to the one input rule of every door (input-rule.ts) before the schema.
 */
export function requestValidator<T>(schema: object, list?: string, wording: SchemaWording = openAiWording): (body: unknown) => T {
  // the schema is the type's contract: ajv's check is what makes the body a T
  const validate = ajv.compile<T>(schema);
  return (body) => {
    if (typeof body !== "object" || body === null || Array.isArray(body)) throw new GatewayError("invalid_request", "request body must be a JSON object");
    if (list !== undefined) checkInputList(body as Record<string, unknown>, list);
    if (!validate(body)) {
      const error = mostSpecific(validate.errors ?? []);
      throw error ? wording(error, error.instancePath.split("/").slice(1)) : new GatewayError("invalid_request", "invalid request body");
    }
    return body;
  };
}

/**
 * With `anyOf` (a message's content is a string, null or a list of parts)
 * ajv reports every branch; the deepest error is the one that names what is
 * actually wrong (`messages[0].content[0].type`). When the branches only
 * disagree about the type, their types are merged into one message.
 */
function mostSpecific(errors: ErrorObject[]): ErrorObject | undefined {
  const relevant = errors.filter((error) => error.keyword !== "anyOf" && error.keyword !== "oneOf" && error.keyword !== "if");
  if (relevant.length === 0) return errors[0];
  const deepest = relevant.reduce((best, error) => (depth(error) > depth(best) ? error : best));
  if (deepest.keyword !== "type") return deepest;
  const types = relevant
    .filter((error): error is KeywordError<"type"> => isKeywordError(error, "type") && error.instancePath === deepest.instancePath)
    .map((error) => error.params.type)
    .flat();
  return { ...deepest, message: `must be ${[...new Set(types)].join(" or ")}` };
}

function depth(error: ErrorObject): number {
  return error.instancePath === "" ? 0 : error.instancePath.split("/").length;
}

/** OpenAI's wording: `invalid value for 'messages[1].role': must be one of …`, `missing required parameter: 'model'`. */
function openAiWording(error: ErrorObject, segments: readonly string[]): GatewayError {
  const path = segments
    .map((segment) => (/^\d+$/.test(segment) ? `[${segment}]` : `.${segment}`))
    .join("")
    .replace(/^\./, "");
  if (isKeywordError(error, "required")) {
    const param = [path, error.params.missingProperty].filter(Boolean).join(".");
    return new GatewayError("invalid_request", `missing required parameter: '${param}'`, param);
  }
  const param = path || null;
  let message: string;
  if (isKeywordError(error, "enum"))
    message = `invalid value for '${path}': must be one of ${error.params.allowedValues.map((v) => `'${String(v)}'`).join(", ")}`;
  else if (error.keyword === "minItems") message = `'${path}' must not be empty`;
  else message = `invalid type or value for '${path || "body"}': ${error.message ?? "invalid"}`;
  return new GatewayError("invalid_request", message, param);
}

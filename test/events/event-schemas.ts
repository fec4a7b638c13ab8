import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const SCHEMA_DIR = join(import.meta.dirname, "..", "..", "schemas", "events");

/** One compiled validator per event type and control message, from `schemas/events/` and its `control/`. */
export function loadEventValidators(): Map<string, ValidateFunction> {
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  (addFormats as unknown as (ajv: Ajv2020) => void)(ajv);
  const validators = new Map<string, ValidateFunction>();
  for (const dir of [SCHEMA_DIR, join(SCHEMA_DIR, "control")]) {
    for (const file of readdirSync(dir).filter((name) => name.endsWith(".schema.json"))) {
      const schema = JSON.parse(readFileSync(join(dir, file), "utf8")) as { properties: { type: { const: string } } };
      validators.set(schema.properties.type.const, ajv.compile(schema));
    }
  }
  return validators;
}

/** Problems of one message against its type's schema; an unknown type is a problem too. */
export function schemaProblems(validators: Map<string, ValidateFunction>, message: Record<string, unknown>): string[] {
  const validate = validators.get(String(message.type));
  if (!validate) return [`no schema for type ${String(message.type)}`];
  return validate(message) ? [] : (validate.errors ?? []).map((error) => `${String(message.type)}${error.instancePath} ${error.message ?? ""}`);
}

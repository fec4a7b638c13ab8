import type { DefinedError, ErrorObject } from "ajv";

/** The error ajv reports for `keyword`, with the params ajv documents for it. */
export type KeywordError<K extends DefinedError["keyword"]> = Extract<DefinedError, { keyword: K }>;

/**
 * Whether an ajv error is one of `keyword`: ajv fills `params` by keyword
 * (`required` names the `missingProperty`, `enum` its `allowedValues`…), so
 * knowing the keyword is knowing the params' shape.
 */
export function isKeywordError<K extends DefinedError["keyword"]>(error: ErrorObject, keyword: K): error is KeywordError<K> {
  return error.keyword === keyword;
}

/**
 * Gemini's unknown-field rejection (docs/plugins.md#6-the-error-classifier): a 400
 * `INVALID_ARGUMENT` "Invalid JSON payload received. Unknown name \"reasoning\"
 * at 'contents[1]': Cannot find field." (the OpenAI-compatible endpoint wraps
 * the same body in an array). Names the field in the quotes.
 */
const UNKNOWN_NAME = /Unknown name \\?"([^"\\]+)\\?"[^.]*?: Cannot find field/;

export function classifyGeminiError(status: number, body: string): string | undefined {
  if (status < 400 || status > 499) return undefined;
  return UNKNOWN_NAME.exec(body)?.[1];
}

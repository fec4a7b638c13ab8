/**
 * Anthropic's unknown-field rejection (docs/plugins.md#6-the-error-classifier): a 400
 * `invalid_request_error` whose message is "<path>: Extra inputs are not
 * permitted", e.g. "messages.65.content.1.tool_use.text: Extra inputs are not
 * permitted" (https://github.com/anthropics/claude-code/issues/4378). Bedrock prefixes "The model returned the following errors: ";
 * Vertex may wrap the whole body in a JSON string. The field is the last
 * segment of the path.
 */
const EXTRA_INPUT = /([A-Za-z0-9_.\-[\]]+):\s*Extra inputs are not permitted/;

export function classifyAnthropicError(status: number, body: string): string | undefined {
  if (status < 400 || status > 499) return undefined;
  const match = EXTRA_INPUT.exec(body.replace(/\\"/g, '"'));
  if (!match) return undefined;
  const segments = match[1].split(".").filter((segment) => segment && !/^\d+$/.test(segment));
  return segments.at(-1);
}

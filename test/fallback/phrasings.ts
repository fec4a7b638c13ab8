import type { FixedError, StrictProfile } from "../support/openai-upstream.js";

/** Upstreams that refuse one carrier field, each in a real provider's phrasing. */
export const PHRASINGS: Record<string, StrictProfile & { routeFields: string; named: string; recorded: string[] }> = {
  googlestyle: {
    fields: ["reasoning"],
    status: 400,
    body: (index, field) =>
      JSON.stringify([
        {
          error: {
            code: 400,
            message: `Invalid JSON payload received. Unknown name "${field}" at 'messages[${index}]': Cannot find field.`,
            status: "INVALID_ARGUMENT",
            details: [
              {
                "@type": "type.googleapis.com/google.rpc.BadRequest",
                fieldViolations: [
                  {
                    field: `messages[${index}]`,
                    description: `Invalid JSON payload received. Unknown name "${field}" at 'messages[${index}]': Cannot find field.`,
                  },
                ],
              },
            ],
          },
        },
      ]),
    routeFields: "[reasoning_content, reasoning]",
    named: "reasoning",
    recorded: ["reasoning"],
  },
  pydantic: {
    fields: ["reasoning"],
    status: 400,
    body: (index, field) =>
      JSON.stringify({
        error: { message: `400 Error from provider: Extra inputs are not permitted, field: 'messages[${index}].${field}'`, type: "invalid_request_error" },
      }),
    routeFields: "[reasoning, reasoning_details]",
    named: "reasoning",
    recorded: ["reasoning", "reasoning_details"],
  },
  anthropicstyle: {
    fields: ["reasoning_details"],
    status: 400,
    body: (index, field) =>
      JSON.stringify({ type: "error", error: { type: "invalid_request_error", message: `messages.${index}.${field}: Extra inputs are not permitted` } }),
    routeFields: "[reasoning_content, reasoning_details]",
    named: "reasoning_details",
    recorded: ["reasoning_details"],
  },
  bedrockstyle: {
    fields: ["reasoning_content"],
    status: 400,
    body: (_index, field) => JSON.stringify({ message: `The model returned the following errors: ${field}: Extra inputs are not permitted` }),
    routeFields: "[reasoning_content, reasoning_details]",
    named: "reasoning_content",
    recorded: ["reasoning_content", "reasoning_details"],
  },
  openaistyle: {
    fields: ["reasoning_details"],
    status: 400,
    body: (_index, field) =>
      JSON.stringify({ error: { message: `Unrecognized request argument supplied: ${field}`, type: "invalid_request_error", param: null, code: null } }),
    routeFields: "[reasoning_details]",
    named: "reasoning_details",
    recorded: ["reasoning_details"],
  },
  ...Object.fromEntries(
    [
      "no such field",
      "unknown field",
      "unrecognized field",
      "unknown parameter",
      "unexpected field",
      "additional properties are not allowed",
      "unknown key",
    ].map((phrase, position) => [
      `generic${position}`,
      {
        fields: ["reasoning_details"],
        status: 400,
        body: (index: number, field: string) =>
          JSON.stringify({ error: { message: `Validation failed: ${phrase} 'messages[${index}].${field}'`, type: "invalid_request_error" } }),
        routeFields: "[reasoning_content, reasoning_details]",
        named: "reasoning_details",
        recorded: ["reasoning_details"],
      },
    ]),
  ),
};

/** 4xx errors that only resemble an unknown-field rejection: none may record a verdict or retry. */
export const LOOK_ALIKES: Record<string, FixedError & { why: string }> = {
  region: {
    status: 403,
    body: JSON.stringify({
      error: {
        message: "Country, region, or territory not supported: reasoning_content is unsupported here",
        type: "request_forbidden",
        code: "unsupported_country_region_territory",
      },
    }),
    why: "a 403 is about the account, whatever it says",
  },
  quota: {
    status: 429,
    body: JSON.stringify({
      error: { message: "You exceeded your current quota (unknown field limits apply to reasoning_details)", type: "insufficient_quota" },
    }),
    why: "a 429 is a rate limit",
  },
  location: {
    status: 400,
    body: JSON.stringify({ error: { code: 400, message: "User location is not supported for the API use.", status: "FAILED_PRECONDITION" } }),
    why: "no unknown-field phrase",
  },
  generic: {
    status: 400,
    body: JSON.stringify({ error: { message: "Provider returned error", code: 400, metadata: { provider_name: "Together" } } }),
    why: "OpenRouter's generic wrapper names nothing",
  },
  toplevel: {
    status: 400,
    body: JSON.stringify([
      { error: { code: 400, message: 'Invalid JSON payload received. Unknown name "reasoning": Cannot find field.', status: "INVALID_ARGUMENT" } },
    ]),
    why: "a bare `reasoning` outside a messages path is the top-level request option",
  },
  unsent: {
    status: 400,
    body: JSON.stringify({ error: { message: "'messages.1' : property 'reasoning_details' is unsupported", type: "invalid_request_error" } }),
    why: "names a field this request did not send",
  },
};

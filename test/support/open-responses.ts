import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { readFixture } from "./fixtures-dir.js";

/**
 * The Open Responses specification (test/fixtures/open-responses/openapi.json)
 * as validators. The OpenAPI 3.1 document's `components.schemas` are JSON
 * Schema 2020-12 and refer to each other as `#/components/schemas/…`, so the
 * whole document is added to ajv under an `$id` and each schema is compiled
 * by its pointer into that document.
 */
const SCHEMA_DOCUMENT_ID = "https://www.openresponses.org/openapi.json";
const document = JSON.parse(readFixture("open-responses/openapi.json")) as {
  paths: Record<string, { post: { responses: { 200: { content: Record<string, { schema: { oneOf?: { $ref: string }[] } }> } } } }>;
  components: { schemas: Record<string, { properties?: { type?: { enum?: string[] } } }> };
};
// strict: false: the document carries OpenAPI keywords (discriminator, example, x-…) that are not JSON Schema
const ajv = new Ajv2020({ strict: false, allErrors: true });
ajv.addSchema({ ...document, $id: SCHEMA_DOCUMENT_ID });

const compiled = new Map<string, ValidateFunction>();
function schema(name: string): ValidateFunction {
  let validate = compiled.get(name);
  if (!validate) {
    validate = ajv.getSchema(`${SCHEMA_DOCUMENT_ID}#/components/schemas/${name}`);
    if (!validate) throw new Error(`the Open Responses spec has no schema ${name}`);
    compiled.set(name, validate);
  }
  return validate;
}

/** Streaming event type → the schema the spec gives it, from the `text/event-stream` answer of POST /responses. */
const EVENT_SCHEMAS = new Map<string, string>(
  (document.paths["/responses"]!.post.responses[200].content["text/event-stream"]!.schema.oneOf ?? []).map(({ $ref }) => {
    const name = $ref.split("/").pop()!;
    const type = document.components.schemas[name]?.properties?.type?.enum?.[0];
    if (!type) throw new Error(`streaming event schema ${name} names no type`);
    return [type, name];
  }),
);

function problems(name: string, value: unknown): string[] {
  const validate = schema(name);
  if (validate(value)) return [];
  return (validate.errors ?? []).slice(0, 8).map((error) => `${name}${error.instancePath} ${error.message ?? ""} ${JSON.stringify(error.params)}`);
}

/** Every way `body` breaks the spec's `ResponseResource` (empty when it conforms). */
export function responseProblems(body: unknown): string[] {
  return problems("ResponseResource", body);
}

/** Every way a streaming event breaks the schema of its type; an event type the spec does not list is a problem too. */
export function eventProblems(event: unknown): string[] {
  const type = (event as { type?: unknown } | null)?.type;
  const name = typeof type === "string" ? EVENT_SCHEMAS.get(type) : undefined;
  if (!name) return [`streaming event type ${JSON.stringify(type)} is not in the Open Responses spec`];
  return problems(name, event);
}

/**
 * An HTTP error body: `{"error": …}` whose payload has the fields of the
 * spec's `ErrorPayload` (type, code, message, param), the shape its
 * streaming `error` event carries and OpenAI answers with.
 */
export function errorProblems(body: unknown): string[] {
  const error = (body as { error?: unknown } | null)?.error;
  if (error === undefined) return ["an error answer without an `error` object"];
  return problems("ErrorPayload", error);
}

/** Problems of any schema of the spec by name (`CompactResource`, …). */
export function schemaProblems(name: string, value: unknown): string[] {
  return problems(name, value);
}

/** Problems of one whole HTTP answer from a `/v1/responses` endpoint: a stream of events, a JSON body, or an error. */
export function answerProblems(status: number, contentType: string | null, text: string, path: string): string[] {
  if (contentType?.startsWith("text/event-stream")) {
    const found: string[] = [];
    for (const block of text.split("\n\n")) {
      const data = block
        .split("\n")
        .filter((line) => line.startsWith("data: "))
        .map((line) => line.slice(6))
        .join("\n");
      if (!data || data === "[DONE]") continue;
      const event = JSON.parse(data) as unknown;
      for (const problem of eventProblems(event)) found.push(`${(event as { type?: string }).type}: ${problem}`);
    }
    return found;
  }
  if (!text) return [];
  const body = JSON.parse(text) as { object?: string };
  if (status >= 400) return errorProblems(body);
  // a deletion's confirmation (`{id, object: "response", deleted: true}`, as OpenAI answers) is no Response
  if (body.object === "response" && (body as { deleted?: unknown }).deleted !== true) return responseProblems(body);
  if (path.endsWith("/compact")) return schemaProblems("CompactResource", body);
  // input_items lists and deletion confirmations: their items are the spec's items
  if (body.object === "list") return ((body as { data?: unknown[] }).data ?? []).flatMap((item) => schemaProblems("ItemField", item));
  return [];
}

/**
 * Watches every answer of the `/v1/responses` endpoints a test receives and
 * validates it against the spec, without changing what the test reads: the
 * answer is cloned and the copy read in the background. `verify()` (after
 * each test) waits for them all and fails on any problem, or when nothing was
 * watched at all.
 */
export class SpecWatch {
  private pending: Promise<void>[] = [];
  private found: string[] = [];
  private watched = 0;

  watch(response: Response, path: string): Response {
    if (!/\/v1\/responses(\/|$|\?)/.test(path)) return response;
    this.watched++;
    const copy = response.clone();
    this.pending.push(
      copy.text().then(
        (text) => {
          for (const problem of answerProblems(copy.status, copy.headers.get("content-type"), text, path))
            this.found.push(`${path} (${copy.status}): ${problem}`);
        },
        () => {
          // the test cut the answer short on purpose (a client leaving); nothing whole to check
        },
      ),
    );
    return response;
  }

  /** A `fetch` for SDK clients that watches every answer it hands them. */
  readonly fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    return this.watch(await fetch(input, init), new URL(url).pathname);
  };

  /** How many answers were checked since the last `verify`. */
  get count(): number {
    return this.watched;
  }

  async verify(options: { expectSome?: boolean } = {}): Promise<void> {
    await Promise.all(this.pending);
    const found = this.found;
    const watched = this.watched;
    this.pending = [];
    this.found = [];
    this.watched = 0;
    if (found.length > 0) throw new Error(`answers that break the Open Responses spec:\n${found.join("\n")}`);
    if (options.expectSome && watched === 0) throw new Error("no /v1/responses answer was checked against the Open Responses spec");
  }
}

import type { JsonObject } from "../../providers/contract.js";
import { responseObject, type ResponseIdentity, type ResponseOutcome } from "./final-object.js";
import type { RecentEchoes } from "./recent-echoes.js";

/** Members of the Response that its outcome decides; every other member echoes the request and stays the same through one response. */
const OUTCOME_MEMBERS: ReadonlySet<string> = new Set(["completed_at", "status", "error", "incomplete_details", "output", "service_tier", "usage"]);

/** The Response's JSON text, in order: runs of echoed members serialised once (without braces), and the names of the outcome's members between them. */
type Template = readonly (string | { readonly member: string })[];

/**
 * One request's Response object (final-object.ts), as an object and as
 * JSON text. A streamed response sends the object three times
 * (`response.created`, `response.in_progress`, the last event), and all of
 * it but the outcome echoes the request: an agent's tools are most of its
 * bytes. So the echoed members are serialised once per request, and each
 * JSON text is that text with the outcome's members written between
 * (docs/performance.md#response-echo-serialised-once). `json(outcome)` is
 * exactly `JSON.stringify(object(outcome))`; response-body.test.ts
 * holds it to that.
 */
export class ResponseBody {
  private template: Template | undefined;

  constructor(
    readonly identity: ResponseIdentity,
    /** Echoed members' text from requests before this one, when they echoed the same (an agent's tools). */
    private readonly recent?: RecentEchoes,
  ) {}

  object(outcome: ResponseOutcome): JsonObject {
    return responseObject(this.identity, outcome);
  }

  json(outcome: ResponseOutcome): string {
    const whole = this.object(outcome);
    const template = (this.template ??= templateOf(whole, this.recent));
    let json = "";
    for (const piece of template) {
      const text = typeof piece === "string" ? piece : `"${piece.member}":${JSON.stringify(whole[piece.member])}`;
      json = json === "" ? text : `${json},${text}`;
    }
    return `{${json}}`;
  }
}

/**
 * The template of a Response object: its members in order, the echoed ones
 * as text. A run of echoed members is serialised as one object (one call,
 * as JSON.stringify writes its members), except a member `recent` may know
 * (an object, or a long string), which is serialised through it.
 */
function templateOf(whole: JsonObject, recent: RecentEchoes | undefined): Template {
  const template: (string | { readonly member: string })[] = [];
  let run: JsonObject | undefined;
  let text = "";
  const add = (members: string) => (text = text === "" ? members : `${text},${members}`);
  const closeRun = () => {
    if (run) add(JSON.stringify(run).slice(1, -1));
    run = undefined;
  };
  for (const member in whole) {
    const value = whole[member];
    if (OUTCOME_MEMBERS.has(member)) {
      closeRun();
      if (text !== "") template.push(text);
      text = "";
      template.push({ member });
    } else if (recent && typeof value === "object" && value !== null) {
      closeRun();
      add(`${JSON.stringify(member)}:${recent.textOf(member, value)}`);
    } else (run ??= {})[member] = value;
  }
  closeRun();
  if (text !== "") template.push(text);
  return template;
}

import type { Json } from "../../providers/contract.js";
import { RecentJson } from "../../providers/recent-json.js";

/** An echoed member's text is kept from this many characters: a shorter one is serialised faster than it is compared and looked up. */
const KEPT_FROM_CHARS = 1024;
/** Values kept per member: the tool lists of the agents sending requests now. */
const KEPT_PER_MEMBER = 8;

/**
 * The JSON text of members a Response echoes from its request, for values
 * seen lately (docs/performance.md#response-echo-serialised-once). An agent
 * sends the same tools with every request, in every session, and their
 * JSON is most of the Response's echo: a value equal to a kept one has the
 * same JSON text (RecentJson, the provider layer's body writer's memo too).
 * One per process (the ResponsesApi's). Removing it: `textOf` returns
 * `JSON.stringify(value)`.
 */
export class RecentEchoes {
  private readonly byMember = new Map<string, RecentJson>();

  /** `JSON.stringify(value)`, from memory when an equal value of `member` was serialised lately. */
  textOf(member: string, value: Json): string {
    let recent = this.byMember.get(member);
    if (!recent) this.byMember.set(member, (recent = new RecentJson(KEPT_PER_MEMBER, KEPT_FROM_CHARS)));
    return recent.textOf(value) ?? "null"; // never undefined: a Json value always has a JSON text
  }
}

import { deepMerge, mergeDefaults } from "../../foundation/util/deep-merge.js";
import type { JsonObject } from "../../foundation/util/json.js";
import { memberOf, objectSpan, skipSpace, type ObjectSpan } from "./json-spans.js";
import { Splices } from "./splices.js";

/** What routes.yaml sets for a route's requests (docs/routes.md): `models[].params` under the client's values, `request_extra` over them. */
export interface RouteSettings {
  readonly defaults: JsonObject | undefined;
  readonly overrides: JsonObject | undefined;
}

/** A carried body read for splicing: its bytes, its top-level object, and the changes made so far. */
export interface CarriedBody {
  readonly bytes: Buffer;
  readonly top: ObjectSpan;
  readonly splices: Splices;
}

/** The body's top-level object, ready for changes. */
export function openCarriedBody(bytes: Buffer): CarriedBody {
  return { bytes, top: objectSpan(bytes, skipSpace(bytes, 0)), splices: new Splices(bytes) };
}

/**
 * The changes every carried body gets at its top level: the model the route
 * maps (undefined: the model goes elsewhere, the member is removed, as
 * Vertex AI wants), and the route's settings, a default only where the
 * client set nothing, an override merged into what it set.
 */
export function spliceTopLevel(body: CarriedBody, model: string | undefined, settings: RouteSettings | undefined): void {
  const { bytes, top, splices } = body;
  const modelMember = memberOf(top, "model");
  if (model === undefined) {
    if (modelMember) splices.removeMembers(top, new Set([modelMember]));
  } else {
    const json = JSON.stringify(model);
    // the model the client named already: no change, and a body with none is sent as the client's own buffer
    if (!modelMember || bytes.toString("latin1", modelMember.valueStart, modelMember.valueEnd) !== json) splices.setMember(top, modelMember, "model", json);
  }
  if (!settings) return;
  const keys = new Set([...Object.keys(settings.defaults ?? {}), ...Object.keys(settings.overrides ?? {})]);
  keys.delete("model");
  for (const key of keys) {
    const member = memberOf(top, key);
    const sent: unknown = member ? JSON.parse(bytes.toString("utf8", member.valueStart, member.valueEnd)) : undefined;
    const merged = deepMerge(mergeDefaults({ [key]: sent }, pick(settings.defaults, key)), pick(settings.overrides, key))[key];
    if (merged === undefined) continue;
    const json = JSON.stringify(merged);
    if (member && json === JSON.stringify(sent)) continue; // what the client sent already
    splices.setMember(top, member, key, json);
  }
}

function pick(settings: JsonObject | undefined, key: string): JsonObject | undefined {
  return settings && settings[key] !== undefined ? { [key]: settings[key] } : undefined;
}

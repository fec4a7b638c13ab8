import type { JsonObject } from "../../src/plugins/contract.js";
import { detached } from "../../src/util/detached.js";
import { sameJson } from "../../src/util/same-json.js";

/**
 * One stream chunk: its top-level members (`choices` aside) and its first
 * choice — or, for a choice that only carries one plain delta string, that
 * string alone (`plain`; then `choice` is undefined, its finish_reason null).
 */
export interface ChunkView {
  readonly fields: JsonObject;
  readonly choice: JsonObject | undefined;
  readonly plain?: PlainDelta;
}

/** A delta that is one string under `reasoning_content`, `reasoning` or `content`. */
export interface PlainDelta {
  readonly field: string;
  readonly text: string;
}

const CHOICES = '"choices":[';
/** A stream whose chunks do not share an envelope stops trying after this many attempts. */
const MAX_LEARNS = 3;

/**
 * Reads the chunks of one stream. Every chunk of an OpenAI-style stream
 * repeats the same envelope (`{"id":…,"object":…,"created":…,"model":…,
 * "choices":[`) around a small delta, and parsing that envelope is most of
 * the cost of a chunk. Once a chunk's envelope is known to be exactly its
 * top-level members followed by `"choices":[`, a chunk that starts with the
 * same bytes and ends with `]}` has the same members, and only its one
 * choice is parsed. Anything else — another envelope, several choices,
 * members after `choices`, whitespace — is parsed whole, as before.
 */
export function chunkReader(): (data: string) => ChunkView | undefined {
  let envelope: { prefix: string; fields: JsonObject } | undefined;
  let learns = 0;
  const deltas: DeltaTemplate[] = [];
  return (data) => {
    // slice-and-compare: String#startsWith on a ~100-character prefix measured several times slower
    if (envelope && data.endsWith("]}") && data.slice(0, envelope.prefix.length) === envelope.prefix) {
      const text = data.slice(envelope.prefix.length, -2);
      for (const template of deltas) {
        const plain = template.read(text);
        if (plain) return { fields: envelope.fields, choice: undefined, plain };
      }
      try {
        const choice: unknown = JSON.parse(text);
        if (choice !== null && typeof choice === "object" && !Array.isArray(choice)) {
          if (deltas.length < MAX_DELTA_TEMPLATES) {
            const template = learnDelta(text, choice as JsonObject);
            if (template) deltas.push(template);
          }
          return { fields: envelope.fields, choice: choice as JsonObject };
        }
      } catch {
        // not exactly one choice: read the chunk whole
      }
    }
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch {
      return undefined;
    }
    if (chunk === null || typeof chunk !== "object" || Array.isArray(chunk)) return undefined;
    const whole = chunk as JsonObject;
    if (learns < MAX_LEARNS) {
      learns++;
      envelope = learnEnvelope(data, whole) ?? envelope;
    }
    return { fields: whole, choice: Array.isArray(whole.choices) ? (whole.choices[0] as JsonObject | undefined) : undefined };
  };
}

/** Reasoning under either name, and content: the deltas a stream is made of. */
const PLAIN_DELTA_FIELDS = new Set(["reasoning_content", "reasoning", "content"]);
const MAX_DELTA_TEMPLATES = 3;
/** What a JSON string may not hold unescaped, and the escape itself: a middle without these is its own value. */
const NOT_PLAIN = /["\\\u0000-\u001f]/;

interface DeltaTemplate {
  /** The delta `text` holds, when it is this template with another plain string in its slot. */
  read(text: string): PlainDelta | undefined;
}

/**
 * Most of a stream is choices that differ only in the text of one delta
 * field: `{"index":0,"delta":{"content":"…"},"finish_reason":null}`. From one
 * such choice this learns the text before and after that string; a later
 * choice that is exactly that text around a string with no quote, backslash
 * or control character holds that string as its value, and is read without a
 * parse. Learned only after proving it: the template with a probe in its
 * slot must parse to the same choice with the probe as the delta's text.
 */
function learnDelta(text: string, choice: JsonObject): DeltaTemplate | undefined {
  const delta = choice.delta;
  if (delta === null || typeof delta !== "object" || Array.isArray(delta) || (choice.finish_reason !== null && choice.finish_reason !== undefined)) return undefined;
  const keys = Object.keys(delta);
  const field = keys[0];
  if (keys.length !== 1 || field === undefined || !PLAIN_DELTA_FIELDS.has(field)) return undefined;
  const value = (delta as JsonObject)[field];
  if (typeof value !== "string") return undefined;
  const pair = `${JSON.stringify(field)}:${JSON.stringify(value)}`;
  const at = text.indexOf(pair);
  if (at < 0 || text.indexOf(pair, at + 1) >= 0) return undefined;
  const before = detached(text.slice(0, at + field.length + 4)); // through the value's opening quote
  const after = detached(text.slice(at + pair.length - 1)); // from its closing quote
  // the same template serves every stream of a provider: proven once per process, not once per stream
  const key = `${before}\u0000${after}`;
  const known = proven.get(key);
  if (known) return known;
  try {
    const probe = JSON.parse(`${before}probe${after}`) as unknown;
    if (!sameJson(probe, { ...choice, delta: { [field]: "probe" } })) return undefined;
  } catch {
    return undefined;
  }
  const template = templateOf(before, after, field);
  if (proven.size >= MAX_PROVEN) proven.clear();
  proven.set(key, template);
  return template;
}

/** Templates proven so far, by their text around the slot; few per provider (one per delta field). */
const proven = new Map<string, DeltaTemplate>();
const MAX_PROVEN = 256;

function templateOf(before: string, after: string, field: string): DeltaTemplate {
  // compare by slices and return a small fixed-shape object: startsWith and a rebuilt choice (spread, computed key) measured slower than the parse they replace
  return {
    read(candidate) {
      if (candidate.length < before.length + after.length || candidate.slice(0, before.length) !== before || candidate.slice(candidate.length - after.length) !== after) return undefined;
      const text = candidate.slice(before.length, candidate.length - after.length);
      // a text kept for the whole turn must not keep the network read it came in (as a parse would not)
      return NOT_PLAIN.test(text) ? undefined : { field, text: detached(text) };
    },
  };
}

/** The envelope of a chunk with one choice and nothing after it, or undefined. */
function learnEnvelope(data: string, chunk: JsonObject): { prefix: string; fields: JsonObject } | undefined {
  if (!Array.isArray(chunk.choices) || chunk.choices.length !== 1 || chunk.error !== undefined || (chunk.usage !== undefined && chunk.usage !== null)) return undefined;
  // a JSON string cannot hold an unescaped quote, so this is a key; the parse below proves it is a top-level one
  const at = data.indexOf(CHOICES);
  if (at < 1 || !data.endsWith("]}")) return undefined;
  const head = data.slice(0, at);
  let fields: unknown;
  try {
    fields = JSON.parse(head.endsWith(",") ? `${head.slice(0, -1)}}` : `${head}}`);
  } catch {
    return undefined;
  }
  if (fields === null || typeof fields !== "object" || Array.isArray(fields)) return undefined;
  if (Object.keys(fields).length !== Object.keys(chunk).length - 1) return undefined;
  return { prefix: detached(data.slice(0, at + CHOICES.length)), fields: fields as JsonObject };
}

import { detached, type JsonObject, parseObject, readArray, readObject, sameJson, type StreamPart } from "../../src/providers/plugin-api.js";

/**
 * One stream chunk: its top-level members (`choices` aside) and its first
 * choice, when that is an object (anything else there is no choice) — or, for a choice that only carries one plain delta string, that
 * string alone, as the part it decodes to (`plain`; then `choice` is
 * undefined, its finish_reason null).
 */
export interface ChunkView {
  readonly fields: JsonObject;
  readonly choice: JsonObject | undefined;
  readonly plain?: PlainDelta;
}

/** A delta that is one string under `reasoning_content`, `reasoning` (a reasoning delta) or `content` (a text delta). */
export type PlainDelta = Extract<StreamPart, { type: "reasoning-delta" | "text-delta" }>;

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
  /** The delta templates inside this stream's envelope: a plain chunk is read by three slices, no parse. */
  let whole: WholeTemplate[] = [];
  /**
   * The view of every plain chunk: one object per stream, valid until the
   * next read. A stream is mostly plain chunks, and the part is the only
   * object such a chunk needs.
   */
  const plainView: { fields: JsonObject; choice: undefined; plain: PlainDelta | undefined } = { fields: {}, choice: undefined, plain: undefined };
  return (data) => {
    for (let i = 0; i < whole.length; i++) {
      const plain = readWhole(whole[i], data);
      if (plain) {
        // the template that read this chunk is tried first next time: a stream's deltas come in runs (its reasoning, then its text)
        if (i > 0) whole.unshift(...whole.splice(i, 1));
        plainView.fields = envelope!.fields;
        plainView.plain = plain;
        return plainView;
      }
    }
    // slice-and-compare: String#startsWith on a prefix this long is several times slower
    if (envelope && data.endsWith("]}") && data.slice(0, envelope.prefix.length) === envelope.prefix) {
      const text = data.slice(envelope.prefix.length, -2);
      try {
        const choice = readObject(JSON.parse(text));
        if (choice) {
          const template = deltas.length < MAX_DELTA_TEMPLATES ? learnDelta(text, choice) : undefined;
          if (template && !deltas.includes(template)) {
            deltas.push(template);
            whole.push(inEnvelope(envelope.prefix, template));
          }
          return { fields: envelope.fields, choice };
        }
      } catch {
        // not exactly one choice: read the chunk whole
      }
    }
    let parsed: JsonObject | undefined;
    try {
      parsed = readObject(JSON.parse(data));
    } catch {
      return undefined;
    }
    if (!parsed) return undefined;
    if (learns < MAX_LEARNS) {
      learns++;
      const learned = learnEnvelope(data, parsed);
      if (learned) {
        envelope = learned;
        whole = deltas.map((template) => inEnvelope(learned.prefix, template));
      }
    }
    const choices = readArray(parsed.choices);
    return { fields: parsed, choice: choices === undefined ? undefined : readObject(choices[0]) };
  };
}

/** Reasoning under either name, and content: the deltas a stream is made of. */
const PLAIN_DELTA_FIELDS = new Set(["reasoning_content", "reasoning", "content"]);
const MAX_DELTA_TEMPLATES = 3;
/** What a JSON string may not hold unescaped, and the escape itself: a middle without these is its own value. */
const NOT_PLAIN = /["\\\u0000-\u001f]/;

/** A choice's text before and after its one plain delta string (see learnDelta). */
interface DeltaTemplate {
  readonly before: string;
  readonly after: string;
  readonly field: string;
}

/** A delta template inside an envelope: a whole chunk's text before and after the delta string, and the part its string is. */
interface WholeTemplate {
  readonly prefix: string;
  readonly suffix: string;
  readonly type: PlainDelta["type"];
}

function inEnvelope(envelopePrefix: string, template: DeltaTemplate): WholeTemplate {
  return {
    prefix: detached(envelopePrefix + template.before),
    suffix: detached(`${template.after}]}`),
    type: template.field === "content" ? "text-delta" : "reasoning-delta",
  };
}

/**
 * The plain delta of a chunk that is exactly the template around a string
 * with no quote, backslash or control character. Compared by slices, and a
 * small fixed-shape result: startsWith, and a rebuilt choice (a spread and a
 * computed key), would be slower than the parse they replace.
 */
function readWhole(template: WholeTemplate, data: string): PlainDelta | undefined {
  const { prefix, suffix } = template;
  if (data.length < prefix.length + suffix.length || data.slice(0, prefix.length) !== prefix || data.slice(data.length - suffix.length) !== suffix)
    return undefined;
  const text = data.slice(prefix.length, data.length - suffix.length);
  // a text kept for the whole turn must not keep the network read it came in (as a parse would not)
  return NOT_PLAIN.test(text) ? undefined : { type: template.type, text: detached(text) };
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
  const delta = readObject(choice.delta);
  if (delta === undefined || (choice.finish_reason !== null && choice.finish_reason !== undefined)) return undefined;
  const keys = Object.keys(delta);
  const field = keys[0];
  if (keys.length !== 1 || field === undefined || !PLAIN_DELTA_FIELDS.has(field)) return undefined;
  const value = delta[field];
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
    const probe: unknown = JSON.parse(`${before}probe${after}`);
    if (!sameJson(probe, { ...choice, delta: { [field]: "probe" } })) return undefined;
  } catch {
    return undefined;
  }
  const template: DeltaTemplate = { before, after, field };
  if (proven.size >= MAX_PROVEN) proven.clear();
  proven.set(key, template);
  return template;
}

/** Templates proven so far, by their text around the slot; few per provider (one per delta field). */
const proven = new Map<string, DeltaTemplate>();
const MAX_PROVEN = 256;

/** The envelope of a chunk with one choice and nothing after it, or undefined. */
function learnEnvelope(data: string, chunk: JsonObject): { prefix: string; fields: JsonObject } | undefined {
  if (!Array.isArray(chunk.choices) || chunk.choices.length !== 1 || chunk.error !== undefined || (chunk.usage !== undefined && chunk.usage !== null))
    return undefined;
  // a JSON string cannot hold an unescaped quote, so this is a key; the parse below proves it is a top-level one
  const at = data.indexOf(CHOICES);
  if (at < 1 || !data.endsWith("]}")) return undefined;
  const head = data.slice(0, at);
  const fields = parseObject(head.endsWith(",") ? `${head.slice(0, -1)}}` : `${head}}`);
  if (fields === undefined || Object.keys(fields).length !== Object.keys(chunk).length - 1) return undefined;
  return { prefix: detached(data.slice(0, at + CHOICES.length)), fields };
}

/**
 * What the shipped rule strips from a lower-cased model name, in order: an
 * OpenRouter `:variant` (`:thinking`, `:free`), a Vertex `@version`, and a
 * date stamp (`-20251001`, `-2025-10-01`) — what only names a snapshot or a
 * routing variant. routes.yaml `model_family.strip` replaces the list.
 */
export const SHIPPED_FAMILY_STRIP: readonly string[] = Object.freeze([":[a-z0-9._-]+$", "@[a-z0-9._-]+$", "-(\\d{8}|\\d{4}-\\d{2}-\\d{2})$"]);

/**
 * The model family a signed or encrypted carrier belongs to (docs/sessions-and-replay.md#replay-rules, rule 7).
 * Signatures are bound to the model that produced them (Anthropic rejects a
 * block "produced by another model"), so the family is the model name itself,
 * trimmed and lower-cased, minus what each strip pattern matches. One per
 * route table: the patterns are compiled once, not per message.
 */
export class ModelFamily {
  static readonly shipped = new ModelFamily(SHIPPED_FAMILY_STRIP);

  private readonly strip: readonly RegExp[];
  /** The patterns, as one string: equal keys mean the same rule (replay's memo compares it). */
  readonly key: string;

  constructor(readonly patterns: readonly string[]) {
    this.strip = patterns.map((pattern) => new RegExp(pattern));
    this.key = patterns.join("\u0000");
  }

  of(model: string): string {
    let family = model.trim().toLowerCase();
    for (const pattern of this.strip) family = family.replace(pattern, "");
    return family;
  }

  /** True when a carrier produced by (plugin, model) may be sent to (plugin, model). */
  sameProducer(producedBy: { plugin: string; model: string }, target: { plugin: string; model: string }): boolean {
    return producedBy.plugin === target.plugin && (producedBy.model === target.model || this.of(producedBy.model) === this.of(target.model));
  }
}

/** The family of `model` under the shipped rule. */
export function modelFamily(model: string): string {
  return ModelFamily.shipped.of(model);
}

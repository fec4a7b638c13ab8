/**
 * The model family a signed or encrypted carrier belongs to (SPEC §5 rule 7).
 * Signatures are bound to the model that produced them (Anthropic rejects a
 * block "produced by another model"), so the family is the model name itself,
 * lower-cased, minus what only names a snapshot or a routing variant:
 * a date stamp (`-20251001`, `-2025-10-01`), a Vertex `@version`, and an
 * OpenRouter `:variant` (`:thinking`, `:free`).
 */
export function modelFamily(model: string): string {
  return model
    .trim()
    .toLowerCase()
    .replace(/:[a-z0-9._-]+$/, "")
    .replace(/@[a-z0-9._-]+$/, "")
    .replace(/-(\d{8}|\d{4}-\d{2}-\d{2})$/, "");
}

/** True when a carrier produced by (plugin, model) may be sent to (plugin, model). */
export function sameProducer(producedBy: { plugin: string; model: string }, target: { plugin: string; model: string }): boolean {
  return producedBy.plugin === target.plugin && modelFamily(producedBy.model) === modelFamily(target.model);
}

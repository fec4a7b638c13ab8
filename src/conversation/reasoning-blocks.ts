/**
 * Reasoning that frontends leave inside an assistant message's text.
 *
 * Open WebUI stores a turn's reasoning as `<details type="reasoning">…</details>`
 * and, depending on version and path, sends it back inside the content, cut out
 * with the newline after it left behind, or re-inlined as `<think>…</think>`;
 * local models emit the tag pairs themselves. The pairs are the ones Open WebUI
 * recognises (`DEFAULT_REASONING_TAGS`, open-webui/open-webui
 * backend/open_webui/utils/middleware.py); start tags may carry attributes.
 * `<|begin_of_solution|>` markers only wrap the answer, so they are unwrapped.
 */
const TAG_PAIRS: readonly (readonly [string, string])[] = [
  ["<think\\b[^>]*>", "</think>"],
  ["<thinking\\b[^>]*>", "</thinking>"],
  ["<reason\\b[^>]*>", "</reason>"],
  ["<reasoning\\b[^>]*>", "</reasoning>"],
  ["<thought\\b[^>]*>", "</thought>"],
  ["<\\|begin_of_thought\\|>", "<\\|end_of_thought\\|>"],
  ["◁think▷", "◁/think▷"],
];

/** Tag pairs whose body is reasoning (case-insensitive: Open WebUI lists `<Thought>` too). */
const REASONING_TAG = new RegExp(TAG_PAIRS.map(([open, close]) => `${open}([\\s\\S]*?)${close}`).join("|"), "gi");
/** Any `<details>` block: Open WebUI's reasoning, tool-call and code blocks as pre-0.7 chats still hold them. */
const DETAILS_BLOCK = /<details\b[^>]*>[\s\S]*?<\/details>/gi;
const REASONING_DETAILS = /<details\s+type="reasoning"[^>]*>[\s\S]*?<\/details>/gi;
const SOLUTION_MARKER = /<\|(?:begin|end)_of_solution\|>/gi;
/** A block or marker can only be there if the text holds one of these. */
const MAYBE_BLOCK = /[<◁]/;

/**
 * The text a frontend shows as the answer: every reasoning block and
 * `<details>` block removed (a space in its place, so words either side stay
 * apart), solution markers unwrapped. Text without `<` or `◁` is returned as is.
 */
export function withoutReasoningBlocks(text: string): string {
  if (!MAYBE_BLOCK.test(text)) return text;
  return text.replace(DETAILS_BLOCK, " ").replace(REASONING_TAG, " ").replace(SOLUTION_MARKER, "");
}

/**
 * A client message's inline reasoning, split from its answer text: for
 * routes whose own field carries reasoning, the text goes upstream without
 * it. Only reasoning blocks are cut (`<details type="reasoning">` and the tag
 * pairs); other `<details>` stay, they are content. `undefined` when the text
 * holds none.
 */
export function splitInlineReasoning(text: string): { text: string; reasoning: string } | undefined {
  if (!MAYBE_BLOCK.test(text)) return undefined;
  const found: string[] = [];
  const collect = (_block: string, ...groups: unknown[]) => {
    const body = groups.slice(0, -2).find((group) => typeof group === "string");
    if (typeof body === "string" && body.trim()) found.push(body.trim());
    return "";
  };
  // Open WebUI's details body is its rendering (a summary line, quoted lines), not the reasoning as produced: removed, not kept
  const rest = text.replace(REASONING_DETAILS, "").replace(REASONING_TAG, collect);
  if (rest.length === text.length) return undefined;
  return { text: rest.replace(SOLUTION_MARKER, "").trim(), reasoning: found.join("\n\n") };
}

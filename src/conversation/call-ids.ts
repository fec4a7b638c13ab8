/**
 * Whether a tool-call id is one an upstream minted at random, unique to its
 * call: OpenAI's `call_` + 24 characters, Anthropic's `toolu_01…`, DeepSeek's
 * `call_00_…`, UUIDs. Those name one call of one turn, so ids and names alone
 * find the turn. Ids that count (`call_0`, Kimi's `functions.get_weather:0`)
 * or spell words recur across turns and conversations, and never qualify.
 *
 * The test: some run of letters and digits at least 12 long that mixes
 * letters with digits or both cases, with at least 8 distinct characters.
 */
export function isUniqueCallId(id: string | undefined): boolean {
  if (!id || id.length < MIN_RUN) return false;
  for (const run of id.split(SEPARATORS)) {
    if (run.length >= MIN_RUN && mixesClasses(run) && new Set(run).size >= MIN_DISTINCT) return true;
  }
  return false;
}

const MIN_RUN = 12;
const MIN_DISTINCT = 8;
const SEPARATORS = /[^A-Za-z0-9]+/;

function mixesClasses(run: string): boolean {
  const digit = /[0-9]/.test(run);
  const lower = /[a-z]/.test(run);
  const upper = /[A-Z]/.test(run);
  return (digit && (lower || upper)) || (lower && upper);
}

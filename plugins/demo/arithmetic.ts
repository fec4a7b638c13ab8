/** Questions longer than this are not searched for arithmetic: the pattern below backtracks quadratically on long digit runs. */
const MAX_ARITHMETIC_INPUT = 500;

/** Plain `12 * (3 + 4)` style arithmetic only; anything else is not arithmetic. */
export function evaluate(text: string): number | undefined {
  if (text.length > MAX_ARITHMETIC_INPUT) return undefined;
  const match = /(-?\d+(?:\.\d+)?(?:\s*[-+*/]\s*\(?\s*-?\d+(?:\.\d+)?\s*\)?)+)/.exec(text);
  if (!match) return undefined;
  const expression = match[1];
  if (!/^[\d\s.+\-*/()]+$/.test(expression)) return undefined;
  const value = calculate(expression);
  return value !== undefined && Number.isFinite(value) ? Math.round(value * 1e6) / 1e6 : undefined;
}

/** `+ - * /`, parentheses and unary minus, by the usual precedence; undefined for anything else. */
function calculate(expression: string): number | undefined {
  const tokens = expression.match(/\d+(?:\.\d+)?|[-+*/()]/g) ?? [];
  let at = 0;
  const sum = (): number | undefined => {
    let left = product();
    while (left !== undefined && (tokens[at] === "+" || tokens[at] === "-")) {
      const op = tokens[at++];
      const right = product();
      left = right === undefined ? undefined : op === "+" ? left + right : left - right;
    }
    return left;
  };
  const product = (): number | undefined => {
    let left = factor();
    while (left !== undefined && (tokens[at] === "*" || tokens[at] === "/")) {
      const op = tokens[at++];
      const right = factor();
      left = right === undefined ? undefined : op === "*" ? left * right : left / right;
    }
    return left;
  };
  const factor = (): number | undefined => {
    const token = tokens[at++];
    if (token === "-") {
      const value = factor();
      return value === undefined ? undefined : -value;
    }
    if (token === "(") {
      const value = sum();
      return tokens[at++] === ")" ? value : undefined;
    }
    return token !== undefined && /^\d/.test(token) ? Number(token) : undefined;
  };
  const value = sum();
  return at === tokens.length ? value : undefined;
}

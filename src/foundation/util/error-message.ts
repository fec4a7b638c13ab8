/** What went wrong, in words: an Error's message, anything else thrown as text. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The `code` a system error carries (`ENOENT`, `EACCES`…), or undefined for an error without one. */
export function errorCode(error: unknown): string | undefined {
  return error instanceof Error && "code" in error && typeof error.code === "string" ? error.code : undefined;
}

/** Log lines the gateway wrote, kept for assertions (the tests look for counts and check no contents leak). */
export interface CapturedLog {
  readonly lines: { level: string; object: Record<string, unknown>; message: string }[];
  readonly logger: never;
}

export function captureLog(): CapturedLog {
  const lines: CapturedLog["lines"] = [];
  const at = (level: string) => (object: Record<string, unknown>, message: string) => void lines.push({ level, object, message });
  const logger: Record<string, unknown> = {
    debug: at("debug"),
    info: at("info"),
    warn: at("warn"),
    error: at("error"),
    trace: at("trace"),
    fatal: at("fatal"),
  };
  logger.child = () => logger;
  logger.isLevelEnabled = () => true; // every level is captured
  return { lines, logger: logger as never };
}

/**
 * process.env as it is now, and a way to put it back. In place: a worker
 * runs file after file (vitest.config.ts), and the files after this one,
 * and what they spawn, read the same environment object.
 */
export function saveEnv(): () => void {
  const saved = { ...process.env };
  return () => {
    for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
    Object.assign(process.env, saved);
  };
}

/**
 * Where live events go (issue 25): `local`, the in-process bus (default), or
 * a Redis URL, a stream every instance writes to and reads from.
 */
export type EventsSetting =
  | { readonly backend: "local" }
  | {
      readonly backend: "redis";
      /** The URL as given, password included: only ever handed to the client library. */
      readonly url: string;
      /** The same URL with any password or user name replaced by `***`, for logs and `/v1/capabilities`. */
      readonly displayUrl: string;
      /** The stream's key (CARRIERD_EVENTS_STREAM, default `carrierd:events`). */
      readonly stream: string;
      /** `XADD … MAXLEN ~ N`: about how many entries the stream keeps, each one flush (up to 5 ms) of one instance's events (CARRIERD_EVENTS_MAXLEN, default 10000). */
      readonly maxLength: number;
      /** Events waiting to be written, per instance, past which new ones are dropped (CARRIERD_EVENTS_QUEUE, default 50000). */
      readonly queueLimit: number;
    };

export const DEFAULT_EVENTS_STREAM = "carrierd:events";
export const DEFAULT_EVENTS_MAXLEN = 10_000;
export const DEFAULT_EVENTS_QUEUE = 50_000;

/** Parses `--events` / `CARRIERD_EVENTS`; anything but `local` or a `redis://` / `rediss://` URL is an error naming both. */
export function parseEventsSetting(value: string | undefined, env: Readonly<Record<string, string | undefined>>): EventsSetting {
  const text = value?.trim() ?? "";
  if (text === "" || text === "local") return { backend: "local" };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`invalid events setting: ${redactUrl(text)} (use "local" or a redis:// URL)`);
  }
  if (url.protocol !== "redis:" && url.protocol !== "rediss:")
    throw new Error(`invalid events setting: ${redactUrl(text)} (use "local" or a redis:// or rediss:// URL)`);
  const stream = env.CARRIERD_EVENTS_STREAM?.trim() || DEFAULT_EVENTS_STREAM;
  return {
    backend: "redis",
    url: text,
    displayUrl: redactUrl(text),
    stream,
    maxLength: wholeNumber(env.CARRIERD_EVENTS_MAXLEN, "CARRIERD_EVENTS_MAXLEN") ?? DEFAULT_EVENTS_MAXLEN,
    queueLimit: wholeNumber(env.CARRIERD_EVENTS_QUEUE, "CARRIERD_EVENTS_QUEUE") ?? DEFAULT_EVENTS_QUEUE,
  };
}

/** A URL with its credentials masked: `redis://:***@host:6379/0`. Text that is not a URL is masked after its scheme. */
export function redactUrl(text: string): string {
  try {
    const url = new URL(text);
    if (url.username) url.username = "***";
    if (url.password) url.password = "***";
    return url.toString();
  } catch {
    const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(text)?.[0];
    return scheme ? `${scheme}***` : "***";
  }
}

function wholeNumber(value: string | undefined, name: string): number | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  const number = Number(value);
  if (!Number.isSafeInteger(number) || number < 1) throw new Error(`invalid ${name}: ${value} (a whole number above 0)`);
  return number;
}

import { isIP } from "node:net";

/** True when `hostname` is `pattern` or a subdomain of it (`a.b.mistral.ai` matches `mistral.ai`, `mistral.ai.evil.io` does not). */
export function hostMatches(hostname: string, pattern: string): boolean {
  const host = hostname.toLowerCase();
  const wanted = pattern.toLowerCase().replace(/^\.+/, "");
  return host === wanted || host.endsWith(`.${wanted}`);
}

/** Loopback, private-range, link-local and `.local` hosts: Ollama, vLLM, llama.cpp, LM Studio. */
export function isLocalHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, "");
  if (host === "localhost" || host.endsWith(".localhost") || host.endsWith(".local") || host === "host.docker.internal") return true;
  const family = isIP(host);
  if (family === 4) {
    const [a, b] = host.split(".").map(Number);
    return a === 127 || a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 169 && b === 254) || a === 0;
  }
  if (family === 6) {
    const mapped = ipv4Mapped(host);
    if (mapped) return isLocalHost(mapped);
    return host === "::1" || host.startsWith("fc") || host.startsWith("fd") || host.startsWith("fe80") || host === "::";
  }
  return false;
}

/** Only this machine: 127/8, ::1, localhost. Private ranges are *not* loopback (binding them exposes the gateway to a network). */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, "");
  if (host === "localhost" || host.endsWith(".localhost") || host === "::1") return true;
  const ipv4 = isIP(host) === 4 ? host : isIP(host) === 6 ? ipv4Mapped(host) : undefined;
  return ipv4 !== undefined && ipv4.startsWith("127.");
}

/** `::ffff:127.0.0.1` and `::ffff:7f00:1` (how URL spells it) are IPv4 addresses in IPv6 clothing. */
function ipv4Mapped(host: string): string | undefined {
  const match = /^::ffff:(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/.exec(host);
  if (!match) return undefined;
  if (match[1]) return match[1];
  const high = parseInt(match[2], 16);
  const low = parseInt(match[3], 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join(".");
}

/** Hostname of a base URL, lower-cased, without port; "" when there is none. */
export function hostOf(baseUrl: string | undefined): string {
  if (!baseUrl) return "";
  try {
    return new URL(baseUrl).hostname.toLowerCase().replace(/^\[|\]$/g, "");
  } catch {
    return "";
  }
}

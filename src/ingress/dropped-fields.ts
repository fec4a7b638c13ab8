import type { Logger } from "../foundation/logging/logger.js";

/** How many (route, field) pairs are remembered as said: clients may send any key, so the memory is bounded. */
const REMEMBERED = 1024;

/**
 * One log line per (route, field) a door dropped because the route's target
 * has no such thing (docs/api.md#what-maps-to-what): an operator learns
 * what a client asks for that its route cannot give, without a line per
 * request.
 */
export class DroppedFields {
  private readonly said = new Set<string>();

  constructor(private readonly log: Logger) {}

  note(door: string, route: string, fields: readonly string[]): void {
    for (const field of fields) {
      const key = `${route}\u0000${field}`;
      if (this.said.has(key) || this.said.size >= REMEMBERED) continue;
      this.said.add(key);
      this.log.info({ door, route, field }, "a request field the route's target has no equivalent for was dropped (said once per route and field)");
    }
  }
}

import { EVENT_BUS } from "../../src/foundation/container/tokens.js";
import type { EventBus, GatewayEvent, GatewayEventType } from "../../src/foundation/event-bus/event-bus.js";
import type { TestGateway } from "../support/gateway.js";

/**
 * Resolves with the next event of `type` (that `matches`) on the gateway's bus. Subscribe
 * before causing the event; rejects after `timeoutMs` so a missing event
 * fails the test instead of hanging it.
 */
export function nextEvent(
  gateway: TestGateway,
  type: GatewayEventType,
  matches: (event: GatewayEvent) => boolean = () => true,
  timeoutMs = 5000,
): Promise<GatewayEvent> {
  const bus = gateway.container.resolve<EventBus>(EVENT_BUS);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      unsubscribe();
      reject(new Error(`no ${type} event within ${timeoutMs} ms`));
    }, timeoutMs);
    const unsubscribe = bus.subscribe((event) => {
      if (event.type !== type || !matches(event)) return;
      clearTimeout(timer);
      unsubscribe();
      resolve(event);
    });
  });
}

import { joinBytes } from "../foundation/util/join-bytes.js";
import { isRecord } from "../foundation/util/json-readers.js";
import type { ChatMessage, ChatRequest } from "./contract.js";
import { RecentJson } from "./recent-json.js";
import { appendMessagePieces } from "./request-strings.js";

/**
 * Serialised forms of messages that recur from request to request: the
 * replayed assistant turns of a history (see `markRecurring`). `null` marks
 * one not serialised yet. Keyed weakly: an entry lives as long as the
 * replay memo holds its message.
 */
const recurring = new WeakMap<ChatMessage, Buffer | null>();

/**
 * Marks a message object the core hands out again, unchanged, on later
 * requests (replay returns the same object for the same client message and
 * stored turn), so its JSON is built once rather than on every request.
 */
export function markRecurring(message: ChatMessage): void {
  if (!recurring.has(message)) recurring.set(message, null);
}

/**
 * A canonical chat body as the JSON bytes `JSON.stringify(body)` would give.
 * A stateless client resends its whole history every turn; the replayed
 * assistant messages are most of those bytes and the same every time, so
 * theirs are kept (off the V8 heap) and copied rather than stringified again.
 * The other messages' long strings are the client's own bytes where the
 * ingress adapter noted them (request-strings.ts).
 */
export function chatBodyBytes(body: ChatRequest): Buffer {
  // pieces, never one growing string: every piece is written into the result as it is, no rope to flatten first
  const pieces: (string | Buffer)[] = [];
  for (const key of Object.keys(body)) {
    if (key === "messages") {
      pieces.push(pieces.length === 0 ? '{"messages":[' : ',"messages":[');
      body.messages.forEach((message, index) => {
        if (index > 0) pieces.push(",");
        const memo = recurring.get(message);
        if (memo) pieces.push(memo);
        else if (memo === null) pieces.push(remember(message));
        else if (!appendMessagePieces(message, pieces)) pieces.push(instructionsOf(message) ?? JSON.stringify(message));
      });
      pieces.push("]");
      continue;
    }
    const json = recentMembers.bytesOf(body[key]); // undefined (and functions) are left out, as JSON.stringify does
    if (json === undefined) continue;
    pieces.push(pieces.length === 0 ? "{" : ",", JSON.stringify(key), ":", json);
  }
  pieces.push(pieces.length === 0 ? "{}" : "}");
  return joinBytes(pieces);
}

/**
 * Recent top-level members (an agent's tool schemas above all) and recent
 * system and developer messages (its instructions), with their JSON: the
 * same on every request, each request bringing its own copy (recent-json.ts).
 */
const recentMembers = new RecentJson(8, 1024);
const recentInstructions = new RecentJson(8, 1024);

function instructionsOf(message: ChatMessage): Buffer | string | undefined {
  // the body writer serialises whatever it is handed, as JSON.stringify would: an element may be no object at all
  if (!isRecord(message)) return undefined;
  return message.role === "system" || message.role === "developer" ? recentInstructions.bytesOf(message) : undefined;
}

function remember(message: ChatMessage): Buffer {
  // a copy of its own, never a view of the request body: the memo outlives the request
  const known: (string | Buffer)[] = [];
  const bytes = appendMessagePieces(message, known) ? joinBytes(known) : Buffer.from(JSON.stringify(message));
  recurring.set(message, bytes);
  return bytes;
}

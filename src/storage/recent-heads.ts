import type { ChatMessage } from "../providers/contract.js";

/** A prompt head's stored form: its JSON and the SHA-256 of it (prompt-heads.ts). */
export interface HeadColumns {
  readonly hash: string;
  readonly text: string;
}

interface RecentHead {
  /** Copies of the head's messages as they were when it was made (a request's objects may change after). */
  readonly messages: readonly Readonly<Record<string, string>>[];
  readonly columns: HeadColumns;
}

/** Heads kept: the instructions of the agents sending requests now, each a few tens of KB. */
const KEPT = 8;

/**
 * Recent prompt heads (docs/performance.md#prompt-heads-stored-once): an
 * agent sends the same instructions on the first request of every
 * session, and turning them into JSON and hashing that JSON is most of
 * what storing the head costs. A head whose messages equal one seen
 * lately, key for key in the same order with the same strings, has the
 * same JSON, so its columns are reused: comparing strings is a memory
 * compare, far cheaper than JSON.stringify and SHA-256 of them. Only
 * heads of plain messages (every field a string) are kept; any other
 * head is made anew each time. Removing it: `columnsOf` calls `make`.
 */
export class RecentHeads {
  private readonly heads: RecentHead[] = [];

  /** The head's columns: those of an equal head seen lately, else `make`'s (kept when its messages are plain). */
  columnsOf(messages: readonly ChatMessage[], make: (messages: readonly ChatMessage[]) => HeadColumns | undefined): HeadColumns | undefined {
    for (let index = 0; index < this.heads.length; index++) {
      const recent = this.heads[index];
      if (!sameMessages(recent.messages, messages)) continue;
      // the most recent first: the next lookup of this head ends at once
      if (index > 0) this.heads.unshift(...this.heads.splice(index, 1));
      return recent.columns;
    }
    const columns = make(messages);
    const copies = columns ? plainCopies(messages) : undefined;
    if (columns && copies) {
      this.heads.unshift({ messages: copies, columns });
      if (this.heads.length > KEPT) this.heads.pop();
    }
    return columns;
  }
}

function sameMessages(kept: readonly Readonly<Record<string, string>>[], messages: readonly ChatMessage[]): boolean {
  if (kept.length !== messages.length) return false;
  for (let index = 0; index < kept.length; index++) {
    const a = kept[index];
    const b = messages[index] as unknown as Record<string, unknown>;
    const keys = Object.keys(a);
    const otherKeys = Object.keys(b);
    if (keys.length !== otherKeys.length) return false;
    for (let k = 0; k < keys.length; k++) {
      const key = keys[k];
      if (key !== otherKeys[k] || a[key] !== b[key]) return false;
    }
  }
  return true;
}

/** Copies of the messages when every field of each is a string (their JSON then follows from the strings alone), else undefined. */
function plainCopies(messages: readonly ChatMessage[]): Record<string, string>[] | undefined {
  const copies: Record<string, string>[] = [];
  for (const message of messages) {
    const copy: Record<string, string> = {};
    for (const [key, value] of Object.entries(message)) {
      if (typeof value !== "string") return undefined;
      copy[key] = value;
    }
    copies.push(copy);
  }
  return copies;
}

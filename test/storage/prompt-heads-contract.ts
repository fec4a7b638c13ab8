import { afterEach, describe, expect, test } from "vitest";
import type { ChatMessage } from "../../src/providers/contract.js";
import { PROMPT_HEAD_MIN_CHARS } from "../../src/storage/prompt-heads.js";
import type { Storage } from "../../src/storage/storage.js";
import { newTurn, turnsAtDepths, type StorageFactory, type StorageState } from "./contract.js";

// an agent's instructions: long enough to be stored apart, with text JSON escapes (quotes, a line separator, a NUL)
const INSTRUCTIONS: ChatMessage[] = [
  { role: "system", content: `You are a coding agent. "Quote" \\ back\u2028slash ünïcödé \u0000 ${"Follow the rules. ".repeat(PROMPT_HEAD_MIN_CHARS / 16)}` },
  { role: "developer", content: "Use the tools offered; answer tersely." },
];

/**
 * Prompt heads stored once (src/storage/prompt-heads.ts): whichever way a
 * turn's prompt was stored, every reader gets it back as it was asked.
 * Declared beside the storage contract, for every backend.
 */
export function promptHeadContract(name: string, factory: StorageFactory): void {
  describe(`Storage contract: ${name}, prompt heads`, () => {
    const opened: Storage[] = [];
    const states: StorageState[] = [];
    afterEach(async () => {
      for (const storage of opened.splice(0)) await storage.close();
      for (const state of states.splice(0)) await state.dispose();
    });
    const storage = async () => {
      const state = await factory();
      states.push(state);
      const store = await state.open("gateway");
      opened.push(store);
      return store;
    };

    test("a long run of system and developer messages comes back byte for byte from show, history, position matching and branches", async () => {
      const store = await storage();
      const first = newTurn("sess_head_1", "one", { prompt: [...INSTRUCTIONS, { role: "user", content: "first task" }] });
      const second = newTurn("sess_head_2", "two", { prompt: [...INSTRUCTIONS, { role: "user", content: "second task" }] });
      const onlyHead = newTurn("sess_head_3", "three", { prompt: INSTRUCTIONS });
      const shortSystem = newTurn("sess_head_4", "four", {
        prompt: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "hi" },
        ],
      });
      const userFirst = newTurn("sess_head_5", "five", { prompt: [{ role: "user", content: "hello" }, ...INSTRUCTIONS] });
      for (const turn of [first, second, onlyHead, shortSystem, userFirst]) await store.turns.save(turn);
      for (const turn of [first, second, onlyHead, shortSystem, userFirst]) {
        const shown = (await store.sessions.show(turn.sessionId))!;
        expect(JSON.stringify(shown.prompts)).toBe(JSON.stringify([turn.prompt]));
        expect(shown.firstPrompt).toBe(JSON.stringify(turn.prompt));
        const listed = (await store.sessions.list({ limit: 100 })).find((session) => session.id === turn.sessionId);
        expect(listed?.firstPrompt).toBe(JSON.stringify(turn.prompt));
        const same = await turnsAtDepths(store, "key-a", turn.sessionId, [{ depth: 1, prompt: JSON.stringify(turn.prompt) }]);
        expect(same.get(1)?.[0]?.samePrompt).toBe(true);
        const other = await turnsAtDepths(store, "key-a", turn.sessionId, [
          { depth: 1, prompt: JSON.stringify([...turn.prompt, { role: "user", content: "x" }]) },
        ]);
        expect(other.get(1)?.[0]?.samePrompt).toBe(false);
      }
      // a search of the user's words finds the sessions whose prompt holds them, never the instructions' words
      const found = await store.sessions.list({ text: "second task", limit: 10 });
      expect(found.map((session) => session.id)).toEqual(["sess_head_2"]);
      expect(await store.sessions.list({ text: "Follow the rules", limit: 10 })).toEqual([]);
      // a branch copy names the same head
      await store.sessions.branch("sess_head_1", "sess_head_copy", undefined);
      expect(JSON.stringify((await store.sessions.show("sess_head_copy"))!.prompts)).toBe(JSON.stringify([first.prompt]));
      // the session removed, the copy still reads its head
      await store.sessions.remove("sess_head_1");
      expect(JSON.stringify((await store.sessions.show("sess_head_copy"))!.prompts)).toBe(JSON.stringify([first.prompt]));
    });
  });
}

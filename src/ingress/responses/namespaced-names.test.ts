import { expect, test } from "vitest";
import { NamespacedNames } from "./namespaced-names.js";

const UPSTREAM_NAME = /^[A-Za-z0-9_-]{1,64}$/;

test("a namespace's function is offered under Codex's flat name, and its call maps back to name and namespace", () => {
  const names = new NamespacedNames();
  expect(names.add("multi_agent_v1", "spawn_agent", new Set())).toBe("multi_agent_v1__spawn_agent");
  // Codex trims the underscores around the delimiter (ToolName::canonical_flat_name)
  expect(names.add("mcp__calendar__", "__create_event", new Set())).toBe("mcp__calendar__create_event");
  expect(names.callOf("multi_agent_v1__spawn_agent")).toEqual({ name: "spawn_agent", namespace: "multi_agent_v1" });
  expect(names.callOf("exec_command")).toEqual({ name: "exec_command" });
  expect(names.flatten("mcp__calendar__", "__create_event")).toBe("mcp__calendar__create_event");
});

test("a joined name no upstream accepts, or one the request already has, is shortened and made unique the same way every time", () => {
  const long = "a_namespace_whose_name_alone_is_longer_than_most_upstreams_accept";
  const first = new NamespacedNames().add(long, "lookup", new Set());
  const again = new NamespacedNames().add(long, "lookup", new Set());
  expect(first).toMatch(UPSTREAM_NAME);
  expect(first).toBe(again);
  const dotted = new NamespacedNames().add("files.v2", "read", new Set());
  expect(dotted).toMatch(UPSTREAM_NAME);
  expect(dotted).not.toBe("files.v2__read");

  const names = new NamespacedNames();
  const clash = names.add("tools", "search", new Set(["tools__search"]));
  expect(clash).not.toBe("tools__search");
  expect(clash).toMatch(UPSTREAM_NAME);
  expect(names.callOf(clash)).toEqual({ name: "search", namespace: "tools" });
  // a resent call of the pair finds the name it was offered under
  expect(names.flatten("tools", "search")).toBe(clash);
});

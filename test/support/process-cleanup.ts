import { afterAll } from "vitest";
import { killStartedHere } from "./child-processes.js";

// After each test file, whatever it started and did not stop (its own afterAll failed or never ran) is killed.
afterAll(() => {
  killStartedHere();
});

// typescript-eslint's recommended rules with type information, over the
// daemon's own code (src/, plugins/); tests get the rules that need no
// types (they are not part of the compiled project).
import tseslint from "typescript-eslint";

const rules = {
  // a leading underscore names what is left unused on purpose (a rest pattern that drops a key, a required parameter)
  "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", destructuredArrayIgnorePattern: "^_" }],
};
const typedRules = {
  ...rules,
  // an async function without an await is how synchronous code meets an asynchronous interface (the SQLite backend
  // behind the storage port, a decoder behind AsyncIterable): a throw inside it becomes the rejection callers handle
  "@typescript-eslint/require-await": "off",
  // passing on what a catch received is not inventing a non-Error rejection
  "@typescript-eslint/prefer-promise-reject-errors": ["error", { allowThrowingUnknown: true }],
};

export default tseslint.config(
  { ignores: ["dist/", "node_modules/", "test/fixtures/", "bench/", "docs/examples/"] },
  {
    files: ["src/**/*.ts", "plugins/**/*.ts"],
    ignores: ["**/*.test.ts"],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: typedRules,
  },
  {
    files: ["**/*.test.ts", "test/**/*.ts", "vitest.config.ts"],
    extends: [tseslint.configs.recommended],
    rules,
  },
);

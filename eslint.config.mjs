// typescript-eslint's recommended rules with type information, over the
// daemon's own code (src/, plugins/); tests get the rules that need no
// types (they are not part of the compiled project).
import tseslint from "typescript-eslint";

// a leading underscore names what is left unused on purpose (a rest pattern that drops a key, a required parameter)
const rules = { "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", destructuredArrayIgnorePattern: "^_" }] };

export default tseslint.config(
  { ignores: ["dist/", "node_modules/", "test/fixtures/", "bench/", "docs/examples/"] },
  {
    files: ["src/**/*.ts", "plugins/**/*.ts"],
    ignores: ["**/*.test.ts"],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules,
  },
  {
    files: ["**/*.test.ts", "test/**/*.ts", "vitest.config.ts"],
    extends: [tseslint.configs.recommended],
    rules,
  },
);

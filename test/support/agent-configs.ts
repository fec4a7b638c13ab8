/**
 * The configuration files the agent CLI tests write into their throwaway
 * HOME, one builder per client, given carrierd's base URL. README.md shows
 * the same files for carrierd's default address (the README's "Agent CLIs"
 * section, which test/clients/readme-configs.test.ts holds to these).
 */

/** The model the configurations name: a model of the route table (the shipped one routes it to DeepSeek). */
export const AGENT_MODEL = "deepseek-reasoner";
/**
 * The environment variable each configuration reads carrierd's key from. Not
 * CARRIERD_API_KEY: the daemon takes that one as its owner key, and a user
 * who exported a client's scoped key under it would start a gateway with it.
 */
export const KEY_VARIABLE = "CARRIERD_CLIENT_KEY";
/** carrierd's default base URL, as the README shows it. */
export const DEFAULT_BASE_URL = "http://127.0.0.1:8642/v1";

/** `~/.codex/config.toml`: a custom provider on the Responses wire (Codex's only one). */
export function codexConfig(baseUrl: string): string {
  return `model = "${AGENT_MODEL}"
model_provider = "carrierd"
check_for_update_on_startup = false

[model_providers.carrierd]
name = "carrierd"
base_url = "${baseUrl}"
env_key = "${KEY_VARIABLE}"
wire_api = "responses"
`;
}

/** `~/.config/opencode/opencode.json`: an `@ai-sdk/openai-compatible` provider, and its model as the default. */
export function opencodeConfig(baseUrl: string): string {
  const config = {
    $schema: "https://opencode.ai/config.json",
    provider: {
      carrierd: {
        npm: "@ai-sdk/openai-compatible",
        name: "carrierd",
        options: { baseURL: baseUrl, apiKey: `{env:${KEY_VARIABLE}}` },
        models: { [AGENT_MODEL]: { name: "DeepSeek Reasoner (carrierd)" } },
      },
    },
    model: `carrierd/${AGENT_MODEL}`,
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}

/** pi's provider names, one per OpenAI wire it speaks. */
export const PI_PROVIDERS = { "openai-completions": "carrierd", "openai-responses": "carrierd-responses" } as const;

/** `~/.pi/agent/models.json`: carrierd twice, once per wire (`--provider` picks one). */
export function piModels(baseUrl: string): string {
  const providers = Object.fromEntries(
    Object.entries(PI_PROVIDERS).map(([api, name]) => [name, { baseUrl, api, apiKey: KEY_VARIABLE, models: [{ id: AGENT_MODEL, reasoning: true }] }]),
  );
  return `${JSON.stringify({ providers }, null, 2)}\n`;
}

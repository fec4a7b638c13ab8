import { definePlugin } from "../../src/providers/plugin-api.js";
import { mergeLayout } from "../anthropic/content-layout.js";
import { classifyBedrockError } from "./errors.js";
import { invokeBedrock } from "./invoke.js";
import { missingAwsCredentials } from "./transport.js";
import schema from "./native.schema.json" with { type: "json" };

/**
 * Amazon Bedrock: Converse / ConverseStream for every model (or InvokeModel
 * for Claude with `params: { bedrock_api: invoke }`), SigV4-signed with the
 * AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN / AWS_REGION
 * environment, or a Bedrock API key named by `api_key_env`. Reasoning is
 * stored in Anthropic format and replayed per model: signed (Claude),
 * stripped (DeepSeek-R1, Kimi K3), unsigned (others), or as routes.yaml `replay:` says.
 */
export default definePlugin({
  name: "bedrock",
  apiVersion: 1,
  description: "Amazon Bedrock Converse / ConverseStream (reasoningContent, per-model replay policy, SigV4)",
  native: { type: "bedrock.native_assistant", schema },
  missingCredentials: missingAwsCredentials,
  create(context) {
    return {
      invoke: (call) => invokeBedrock(call, context),
      classifyError: classifyBedrockError,
      mergeNative: mergeLayout,
    };
  },
});

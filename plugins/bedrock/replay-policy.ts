import type { UpstreamCall } from "../../src/providers/plugin-api.js";

/**
 * Which stored reasoning a Bedrock model may read back (routes.yaml `replay`, docs/routes.md#what-a-route-sets;
 * hermes-agent, https://github.com/NousResearch/hermes-agent, `agent/bedrock_adapter.py`):
 * - `signed`: thinking with its signature and redacted blocks, verbatim (Claude);
 * - `stripped`: no reasoning on earlier turns (DeepSeek-R1 and Kimi K3 reject or misread it);
 * - `unsigned`: the readable reasoning text only, never a signature or an encrypted block (everyone else).
 */
export type ReplayPolicy = "signed" | "unsigned" | "stripped";

export function defaultReplayPolicy(model: string): ReplayPolicy {
  const id = model.toLowerCase();
  if (id.includes("claude")) return "signed";
  if (/deepseek[.-]r1|moonshotai\.kimi-k3/.test(id)) return "stripped";
  return "unsigned";
}

/** routes.yaml `replay:` wins over the per-model default. */
export function replayPolicy(call: UpstreamCall): ReplayPolicy {
  return call.policy.replay ?? defaultReplayPolicy(call.model);
}

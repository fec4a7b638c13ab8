import type { CommandModule } from "yargs";
import { withState } from "./with-state.js";

interface VerdictsFlags {
  home?: string;
  json?: boolean;
  provider?: string;
  model?: string;
}

export const verdictsCommand: CommandModule<object, VerdictsFlags> = {
  command: "verdicts <action>",
  describe: "unknown-field verdicts: list them, or clear them by hand",
  builder: (yargs) =>
    yargs
      .command<VerdictsFlags>({
        command: "list",
        describe: "verdicts in force (--json: [{provider, host, model, field, status, message, recorded_at}])",
        builder: (y) => y.option("json", { type: "boolean", default: false }),
        handler: (flags) =>
          withState(flags, async (storage) => {
            const verdicts = await storage.verdicts.list();
            if (flags.json) return console.log(JSON.stringify(verdicts, null, 2));
            if (verdicts.length === 0) return console.log("no verdicts in force");
            for (const verdict of verdicts) {
              console.log(`${verdict.provider} (${verdict.host}) ${verdict.model}: ${verdict.field} rejected with ${verdict.status} at ${verdict.recorded_at}`);
              console.log(`    ${verdict.message.slice(0, 200)}`);
            }
          }),
      })
      .command<VerdictsFlags>({
        command: "clear",
        describe: "clear verdicts (all, or those of --provider / --model); the running gateway sends the fields again on its next request",
        builder: (y) => y.option("provider", { type: "string" }).option("model", { type: "string", describe: "upstream model name" }),
        handler: (flags) =>
          withState(flags, async (storage) => {
            const selects = (provider: string, model: string) =>
              (flags.provider === undefined || flags.provider === provider) && (flags.model === undefined || flags.model === model);
            const { verdicts: cleared } = await storage.verdicts.clear((verdict) => selects(verdict.provider, verdict.model));
            console.log(`cleared ${cleared.length} verdict(s)`);
            for (const verdict of cleared) console.log(`  ${verdict.provider} (${verdict.host}) ${verdict.model}: ${verdict.field}`);
          }),
      })
      .demandCommand(1),
  handler: () => undefined,
};

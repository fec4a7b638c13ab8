import "reflect-metadata";
import { hideBin } from "yargs/helpers";
import { cli } from "./cli.js";

await cli(hideBin(process.argv)).parseAsync();

import { statSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { fmt, interleaved, median, ratio } from "./lib.ts";

/** Issue 2: cold start of the built `webhook --help` against `node -e 0` on the same Node; target at most 1.5x. */
export function benchWebhook(runs = 40): void {
  const bin = fileURLToPath(new URL("../../packages/webhook/dist/webhook.mjs", import.meta.url));
  const node = process.execPath;
  const [bare = [], help = [], version = []] = interleaved(
    [
      [node, ["-e", "0"]],
      [node, [bin, "--help"]],
      [node, [bin, "--version"]],
    ],
    runs,
  );
  const base = median(bare);
  console.log(`webhook cold start: ${runs} runs each, interleaved, Node ${process.version}`);
  console.log(`  node -e 0                  median ${fmt(base)}`);
  console.log(
    `  webhook --help             median ${fmt(median(help))}   ratio ${ratio(median(help), base)} (target <= 1.5x)`,
  );
  console.log(`  webhook --version          median ${fmt(median(version))}   ratio ${ratio(median(version), base)}`);
  console.log(
    `  bundle size                ${(statSync(bin).size / 1024).toFixed(1)} KiB (packages/webhook/dist/webhook.mjs)`,
  );
}

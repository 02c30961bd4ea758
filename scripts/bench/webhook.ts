import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { fmt, interleaved, median, ratio } from "./lib.ts";

/**
 * Issue 2, issue 35: cold start of the built `webhook --help` against `node -e 0` on the same Node; target at most
 * 1.5x. As installed, the launcher gives Node a compile cache (NODE_COMPILE_CACHE, deploy/install.sh): the target is
 * measured with one, warmed by the first runs as by a first start on the VM; without one is printed beside it.
 */
export function benchWebhook(runs = 40): void {
  const bin = fileURLToPath(new URL("../../packages/webhook/dist/webhook.mjs", import.meta.url));
  const node = process.execPath;
  const cache = mkdtempSync(join(tmpdir(), "mcops-bench-compile-cache-"));
  const cached = { ...process.env, NODE_COMPILE_CACHE: cache };
  const plain = { ...process.env, NODE_COMPILE_CACHE: undefined };
  try {
    const [bare = [], help = [], version = [], uncached = []] = interleaved(
      [
        [node, ["-e", "0"], plain],
        [node, [bin, "--help"], cached],
        [node, [bin, "--version"], cached],
        [node, [bin, "--help"], plain],
      ],
      runs,
    );
    const base = median(bare);
    console.log(`webhook cold start: ${runs} runs each, interleaved, Node ${process.version}`);
    console.log(`  node -e 0                  median ${fmt(base)}`);
    console.log(
      `  webhook --help             median ${fmt(median(help))}   ratio ${ratio(median(help), base)} (target <= 1.5x; compile cache, as installed)`,
    );
    console.log(`  webhook --version          median ${fmt(median(version))}   ratio ${ratio(median(version), base)}`);
    console.log(
      `  webhook --help, no cache   median ${fmt(median(uncached))}   ratio ${ratio(median(uncached), base)} (a first start)`,
    );
    console.log(
      `  bundle size                ${(statSync(bin).size / 1024).toFixed(1)} KiB (packages/webhook/dist/webhook.mjs)`,
    );
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
}

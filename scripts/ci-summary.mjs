// Sums the vitest JSON reports of every package into the one line CI reads: "N passed, N failed".
// Plain JavaScript on purpose: it must run on whatever Node is on PATH, even when set-up failed.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const rc = Number(process.argv[2] ?? 0);
let passed = 0;
let failed = 0;
// Every workspace with tests: packages/* and deploy.
const workspaces = [...readdirSync("packages").map((pkg) => join("packages", pkg)), "deploy"];
for (const dir of workspaces) {
  const report = join(dir, "test-results", "vitest.json");
  if (!existsSync(report)) continue;
  const json = JSON.parse(readFileSync(report, "utf8"));
  passed += json.numPassedTests ?? 0;
  failed += json.numFailedTests ?? 0;
}
// A run that failed outside any test (set-up, build, a crashed worker) still counts as a failure.
if (rc !== 0 && failed === 0) failed = 1;
console.log(`${passed} passed, ${failed} failed`);

// Sums the vitest JSON reports of every package into the one line CI reads: "N passed, N failed".
// Plain JavaScript on purpose: it must run on whatever Node is on PATH, even when set-up failed.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

const rc = Number(process.argv[2] ?? 0);
let passed = 0;
let failed = 0;
const failures = [];
// Every workspace with tests: packages/* and deploy.
const workspaces = [...readdirSync("packages").map((pkg) => join("packages", pkg)), "deploy"];
for (const dir of workspaces) {
  const report = join(dir, "test-results", "vitest.json");
  if (!existsSync(report)) continue;
  const json = JSON.parse(readFileSync(report, "utf8"));
  passed += json.numPassedTests ?? 0;
  failed += json.numFailedTests ?? 0;
  // CI shows only the end of the output: each failed test is named here, just above the summary, with the start of
  // its failure (bounded, so that one test failing many times cannot push the rest out of view).
  for (const file of json.testResults ?? []) {
    for (const test of file.assertionResults ?? []) {
      if (test.status !== "failed" || failures.length >= 20) continue;
      const message = (test.failureMessages ?? []).join("\n").split("\n").slice(0, 6).join("\n  ");
      failures.push(
        `FAILED ${join(dir, relative(join(process.cwd(), dir), file.name))} > ${test.fullName}\n  ${message.slice(0, 1200)}`,
      );
    }
    // A file that failed with no test failing in it (its beforeAll threw, so its tests were skipped) is a failure too.
    const testFailed = (file.assertionResults ?? []).some((test) => test.status === "failed");
    if (file.status === "failed" && !testFailed) {
      failed += 1;
      if (failures.length < 20) {
        failures.push(
          `FAILED ${join(dir, relative(join(process.cwd(), dir), file.name))}\n  ${String(file.message ?? "").slice(0, 1200)}`,
        );
      }
    }
  }
}
for (const failure of failures) console.log(failure);
// A run that failed outside any test (set-up, build, a crashed worker) still counts as a failure.
if (rc !== 0 && failed === 0) failed = 1;
console.log(`${passed} passed, ${failed} failed`);

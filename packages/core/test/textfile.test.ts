import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { gaugeValue, writeGauges } from "../src/textfile.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "mcops-textfile-"));
  dirs.push(dir);
  return dir;
}
const warnings: string[] = [];
const logger = { warn: (line: string) => void warnings.push(line) };

describe("writeGauges", () => {
  it("writes each gauge with its HELP, TYPE and server label, mode 644", () => {
    const dir = tempDir();
    writeGauges(
      [
        { name: "mcops_drill_success", help: "1 when the last drill verified the snapshot.", value: 1 },
        { name: "mcops_drill_duration_seconds", help: "How long it took.", value: 12, digits: 3 },
      ],
      { dir, file: "mcops_drill.prom", serverId: "1a2b3c4d", logger },
    );
    const text = readFileSync(join(dir, "mcops_drill.prom"), "utf8");
    expect(text).toBe(
      [
        "# HELP mcops_drill_success 1 when the last drill verified the snapshot.",
        "# TYPE mcops_drill_success gauge",
        'mcops_drill_success{server="1a2b3c4d"} 1',
        "# HELP mcops_drill_duration_seconds How long it took.",
        "# TYPE mcops_drill_duration_seconds gauge",
        'mcops_drill_duration_seconds{server="1a2b3c4d"} 12.000',
        "",
      ].join("\n"),
    );
    expect(statSync(join(dir, "mcops_drill.prom")).mode & 0o777).toBe(0o644);
    expect(gaugeValue(text, "mcops_drill_duration_seconds")).toBe(12);
    expect(gaugeValue(text, "mcops_drill_chunks")).toBeUndefined();
  });

  it("writes several gauges of one name with their own labels, HELP and TYPE once", () => {
    const dir = tempDir();
    const help = "Seconds until the certificate expires.";
    writeGauges(
      [
        { name: "mcops_cert_expiry_seconds", help, value: 100, labels: { cert: "origin", name: "example.com" } },
        { name: "mcops_cert_expiry_seconds", help, value: 7, labels: { cert: "wings", name: 'a"b\\c' } },
      ],
      { dir, file: "c.prom", serverId: "s", logger },
    );
    expect(readFileSync(join(dir, "c.prom"), "utf8")).toBe(
      [
        `# HELP mcops_cert_expiry_seconds ${help}`,
        "# TYPE mcops_cert_expiry_seconds gauge",
        'mcops_cert_expiry_seconds{server="s",cert="origin",name="example.com"} 100',
        'mcops_cert_expiry_seconds{server="s",cert="wings",name="a_b_c"} 7',
        "",
      ].join("\n"),
    );
  });

  it("keeps the named gauges of the previous file that this write does not carry", () => {
    const dir = tempDir();
    const options = { dir, file: "x.prom", serverId: "s", logger, keep: ["mcops_last_ok", "mcops_gone"] };
    writeGauges(
      [
        { name: "mcops_ok", help: "ok", value: 1 },
        { name: "mcops_last_ok", help: "last ok", value: 1700000000 },
      ],
      options,
    );
    writeGauges([{ name: "mcops_ok", help: "ok", value: 0 }], options);
    const text = readFileSync(join(dir, "x.prom"), "utf8");
    expect(gaugeValue(text, "mcops_ok")).toBe(0);
    expect(gaugeValue(text, "mcops_last_ok")).toBe(1700000000);
    expect(text.match(/# TYPE mcops_last_ok gauge/g)).toHaveLength(1);
  });

  it("writes nothing without a directory, and only warns when the directory cannot be written", () => {
    writeGauges([{ name: "mcops_ok", help: "ok", value: 1 }], {
      dir: undefined,
      file: "x.prom",
      serverId: "s",
      logger,
    });
    const file = join(tempDir(), "a-file");
    writeFileSync(file, "");
    warnings.length = 0;
    writeGauges([{ name: "mcops_ok", help: "ok", value: 1 }], { dir: file, file: "x.prom", serverId: "s", logger });
    expect(warnings).toEqual([expect.stringMatching(/^could not write the Prometheus textfile in .*a-file \(E\w+\)$/)]);
  });
});

import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runTool, type TempDir, tempDir, toolEnv } from "@mcops/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { certWarnings } from "../src/cert-watch.ts";

/** The monitor reads what the built `certs check` writes: its real lines, on certificates made with openssl. */
const CERTS = fileURLToPath(new URL("../../certs/dist/certs.mjs", import.meta.url));
let dir: TempDir;

beforeEach(() => {
  dir = tempDir("mcops-cert-watch-");
});
afterEach(() => dir.cleanup());

/** A self-signed certificate valid `days` from now (negative: already expired), made as openssl x509 -req makes it. */
function cert(file: string, days: number): void {
  const key = join(dir.path, "k.pem");
  const csr = join(dir.path, "r.csr");
  execFileSync(
    "openssl",
    ["req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr, "-subj", "/CN=x"],
    {
      stdio: "ignore",
    },
  );
  execFileSync("openssl", ["x509", "-req", "-in", csr, "-signkey", key, "-days", String(days), "-out", file], {
    stdio: "ignore",
  });
}

describe("certWarnings", () => {
  it("finds a certificate within CERT_WARN, an expired one and an unreadable one in certs check's own lines", async () => {
    const ssl = join(dir.path, "ssl");
    mkdirSync(ssl);
    cert(join(ssl, "fine.example.com.crt"), 400);
    cert(join(ssl, "soon.example.com.crt"), 5);
    cert(join(ssl, "gone.example.com.crt"), -1);
    writeFileSync(join(ssl, "broken.example.com.crt"), "not a certificate\n");
    const run = await runTool(CERTS, ["check", "--ssl-dir", ssl, "--wings-config", join(dir.path, "none.yml")], {
      env: toolEnv(dir.path),
    });
    expect(run.code).toBe(1);
    expect(
      certWarnings(run.stdout)
        .map((w) => w.title)
        .sort(),
    ).toEqual([
      "Certificate expired: origin gone.example.com",
      "Certificate expires in 4 days: origin soon.example.com",
      "Certificate not readable: origin broken.example.com",
    ]);
  });
});

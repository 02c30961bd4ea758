import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { zxRunner } from "@mcops/core/runner";
import { runTool, type TempDir, tempDir, toolEnv } from "@mcops/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Actor } from "../src/act.ts";
import { certWarnings, watchCerts } from "../src/cert-watch.ts";

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
  it("takes a certificate's name with spaces up to what certs check says of it", () => {
    const lines = "origin old site: valid until 2026-11-26 (0 days) — within CERT_WARN (14 d): renew it\n";
    expect(certWarnings(lines).map((w) => w.title)).toEqual(["Certificate expires in 0 days: origin old site"]);
  });

  it("gives up on a certs check that hangs, with one warning line, and does not hold the monitor", async () => {
    const hang = join(dir.path, "certs-hangs");
    // It would sleep far beyond this test's limit: returning at all proves the monitor gave up on it.
    writeFileSync(hang, "#!/bin/sh\nexec sleep 3600\n");
    chmodSync(hang, 0o755);
    const lines: string[] = [];
    const actor = {
      ctx: { runner: zxRunner, signal: new AbortController().signal },
      state: {},
      logger: { warn: (l: string) => lines.push(l), info: (l: string) => lines.push(l) },
    } as unknown as Actor;
    await watchCerts(actor, hang, Date.now(), async () => undefined, 300);
    expect(lines).toEqual([expect.stringMatching(/^the daily certificate check failed \(exit/)]);
  });

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

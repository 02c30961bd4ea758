import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** A certificate and its key made with Debian's openssl (in the tests only), as text and as files. */
export interface MadePair {
  cert: string;
  key: string;
  certFile: string;
  keyFile: string;
}

/**
 * A self-signed RSA certificate for `names` (subject alternative names; default Cloudflare's `*.example.com` and
 * `example.com`), valid `days` from now (negative: already expired), made as `openssl x509 -req` makes it.
 */
export function makeCert(dir: string, name: string, options: { days?: number; names?: string[] } = {}): MadePair {
  const keyFile = join(dir, `${name}.key`);
  const certFile = join(dir, `${name}.pem`);
  const csr = join(dir, `${name}.csr`);
  const ext = join(dir, `${name}.ext`);
  const names = (options.names ?? ["*.example.com", "example.com"]).map((n) => `DNS:${n}`).join(",");
  const subject = "/O=CloudFlare, Inc./CN=CloudFlare Origin Certificate";
  execFileSync(
    "openssl",
    ["req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", keyFile, "-out", csr, "-subj", subject],
    {
      stdio: "ignore",
    },
  );
  writeFileSync(ext, `subjectAltName=${names}\n`);
  const days = String(options.days ?? 5475);
  execFileSync(
    "openssl",
    ["x509", "-req", "-in", csr, "-signkey", keyFile, "-days", days, "-extfile", ext, "-out", certFile],
    {
      stdio: "ignore",
    },
  );
  return { cert: readFileSync(certFile, "utf8"), key: readFileSync(keyFile, "utf8"), certFile, keyFile };
}

import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runTool, type TempDir, tempDir, toolEnv } from "@mcops/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeCert } from "./openssl.ts";

/**
 * The built `certs origin`, with certificates and keys the test makes with Debian's openssl (in the test only): what
 * an operator pastes from a browser on Windows is installed byte-clean, and every refusal leaves the files as they were.
 */
const BIN = fileURLToPath(new URL("../dist/certs.mjs", import.meta.url));
let dir: TempDir;
let ssl: string;
let env: NodeJS.ProcessEnv;

/** What a browser on Windows gives: a byte-order mark, CRLF line ends, a trailing space here and there. */
const windows = (text: string) => `\uFEFF${text.replace(/\n/g, " \r\n")}`;

/** No nginx here: no configuration test unless a test gives its own stand-in. */
const origin = (args: string[], input?: string) =>
  runTool(
    BIN,
    [
      "origin",
      ...["--domain", "example.com", "--host", "panel.example.com", "--ssl-dir", ssl],
      ...(args.includes("--nginx-test") ? [] : ["--nginx-test", ""]),
      ...args,
    ],
    { env, input },
  );

/** The directory's files and their bytes, to compare before and after a refusal. */
function snapshot(): Record<string, string> {
  if (!existsSync(ssl)) return {};
  return Object.fromEntries(readdirSync(ssl).map((n) => [n, readFileSync(join(ssl, n), "utf8")]));
}

beforeEach(() => {
  dir = tempDir("mcops-certs-");
  ssl = join(dir.path, "ssl", "cloudflare");
  env = toolEnv(dir.path);
});
afterEach(() => dir.cleanup());

describe("certs origin", () => {
  it("installs a CRLF + BOM paste byte-clean, the key 600 and the certificate 644", async () => {
    const pair = makeCert(dir.path, "a");
    const run = await origin([], windows(pair.cert + pair.key));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(
      /^Installed .*\/example\.com\.crt \(644\) and .*\/example\.com\.key \(600\): for \*\.example\.com, example\.com, valid until \d{4}-\d\d-\d\d \(15 years\); /,
    );
    expect(readFileSync(join(ssl, "example.com.crt"), "utf8")).toBe(pair.cert);
    expect(readFileSync(join(ssl, "example.com.key"), "utf8")).toBe(pair.key);
    expect(statSync(join(ssl, "example.com.crt")).mode & 0o777).toBe(0o644);
    expect(statSync(join(ssl, "example.com.key")).mode & 0o777).toBe(0o600);
  });

  it("takes the pair from files too, and keeps the pair before as .previous", async () => {
    const first = makeCert(dir.path, "a");
    expect((await origin([], first.cert + first.key)).code).toBe(0);
    const second = makeCert(dir.path, "b");
    writeFileSync(join(dir.path, "new.crt"), windows(second.cert));
    writeFileSync(join(dir.path, "new.key"), windows(second.key));
    const run = await origin(["--cert", join(dir.path, "new.crt"), "--key", join(dir.path, "new.key")]);
    expect(run.code, run.stderr).toBe(0);
    expect(snapshot()).toEqual({
      "example.com.crt": second.cert,
      "example.com.key": second.key,
      "example.com.crt.previous": first.cert,
      "example.com.key.previous": first.key,
    });
  });

  it("refuses, in one line and writing nothing, a key that does not match, an expired certificate, another host, not PEM", async () => {
    const good = makeCert(dir.path, "a");
    expect((await origin([], good.cert + good.key)).code).toBe(0);
    const before = snapshot();
    const other = makeCert(dir.path, "b");
    const expired = makeCert(dir.path, "c", { days: -1 });
    const elsewhere = makeCert(dir.path, "d", { names: ["*.example.org"] });
    const cases: Array<[string, RegExp]> = [
      [good.cert + other.key, /^certs: the key does not match the certificate \(their public keys differ\) — /],
      [
        expired.cert + expired.key,
        /^certs: the certificate expired on \d{4}-\d\d-\d\d — create a new origin certificate\n$/,
      ],
      [
        elsewhere.cert + elsewhere.key,
        /^certs: the certificate is for \*\.example\.org, not for panel\.example\.com — /,
      ],
      ["hello\r\n", /^certs: the paste holds no PEM certificate/],
      [good.cert, /^certs: the paste holds no PEM private key/],
    ];
    for (const [paste, said] of cases) {
      const run = await origin([], paste);
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(said);
      expect(run.stderr.trim().split("\n")).toHaveLength(1);
      expect(snapshot()).toEqual(before);
    }
  });

  it("takes a paste indented, with no-break spaces and tabs; refuses an encrypted key and certificates that are not a chain", async () => {
    const pair = makeCert(dir.path, "a");
    const messy = (pair.cert + pair.key)
      .split("\n")
      .map((line, i) =>
        i % 3 === 0
          ? `  ${line}\u00A0`
          : i % 3 === 1 && !line.startsWith("-----")
            ? line.replace(/^(.{10})/, "$1\t")
            : line,
      )
      .join("\r\n");
    const run = await origin([], messy);
    expect(run.code, run.stderr).toBe(0);
    expect(readFileSync(join(ssl, "example.com.crt"), "utf8")).toBe(pair.cert);
    const before = snapshot();
    const encrypted = execFileSync("openssl", ["pkcs8", "-topk8", "-in", pair.keyFile, "-passout", "pass:secret"], {
      encoding: "utf8",
    });
    const refused = await origin([], pair.cert + encrypted);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/^certs: the paste's private key is encrypted — nginx could not read it at boot/);
    const other = makeCert(dir.path, "b");
    const notChain = await origin([], pair.cert + other.cert + pair.key);
    expect(notChain.code).toBe(2);
    expect(notChain.stderr).toMatch(
      /^certs: the paste's certificate number 2 did not issue the one before it: not a chain/,
    );
    expect(snapshot()).toEqual(before);
  });

  it("puts the pair before back when the disk fills between the key and the certificate", async () => {
    const old = makeCert(dir.path, "old");
    const pair = makeCert(dir.path, "a");
    writeFileSync(join(dir.path, "paste"), pair.cert + pair.key);
    // In a mount namespace of its own, the ssl directory is a 12 KiB tmpfs holding the old pair (a page each): the
    // new key fills it, and the certificate cannot be written.
    const script = [
      'mount -t tmpfs -o size=12k tmpfs "$SSL"',
      'cp "$OLD_CRT" "$SSL/example.com.crt" && cp "$OLD_KEY" "$SSL/example.com.key"',
      '"$CERTS" origin --domain example.com --ssl-dir "$SSL" --nginx-test "" < "$PASTE"; code=$?',
      'for f in "$SSL"/*; do echo "== $(basename "$f")"; cat "$f"; done',
      "exit $code",
    ].join("; ");
    mkdirSync(ssl, { recursive: true });
    const run = await runTool("unshare", ["--mount", "--propagation", "private", "sh", "-c", script], {
      env: {
        ...env,
        SSL: ssl,
        OLD_CRT: old.certFile,
        OLD_KEY: old.keyFile,
        CERTS: BIN,
        PASTE: join(dir.path, "paste"),
      },
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /^certs: installing the pair in .* failed \(ENOSPC\) — the previous certificate and key are back in place\n$/,
    );
    expect(run.stdout).toBe(`== example.com.crt\n${old.cert}== example.com.key\n${old.key}`);
  });

  it("puts back only what it replaced when nginx -t fails and only the old certificate was there", async () => {
    const nginx = join(dir.path, "nginx-fails");
    writeFileSync(nginx, "#!/bin/sh\nexit 1\n");
    chmodSync(nginx, 0o755);
    const old = makeCert(dir.path, "old");
    mkdirSync(ssl, { recursive: true });
    writeFileSync(join(ssl, "example.com.crt"), old.cert);
    const pair = makeCert(dir.path, "a");
    expect((await origin(["--nginx-test", ` ${nginx}   -t `], pair.cert + pair.key)).code).toBe(1);
    expect(snapshot()).toEqual({ "example.com.crt": old.cert });
  });

  it("puts the previous pair back when nginx -t fails, and removes a first pair", async () => {
    const nginx = join(dir.path, "nginx-stand-in");
    writeFileSync(nginx, '#!/bin/sh\necho "nginx: [emerg] cannot load certificate key: PEM lib" >&2\nexit 1\n');
    chmodSync(nginx, 0o755);
    const first = makeCert(dir.path, "a");
    const refused = await origin(["--nginx-test", `${nginx} -t`], first.cert + first.key);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /nginx: \[emerg\] cannot load certificate key: PEM lib — the new files were removed/,
    );
    expect(snapshot()).toEqual({});
    expect((await origin([], first.cert + first.key)).code).toBe(0);
    const before = snapshot();
    const second = makeCert(dir.path, "b");
    const again = await origin(["--nginx-test", `${nginx} -t`], second.cert + second.key);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/the previous certificate and key are back in place; nginx was not reloaded/);
    expect(readFileSync(join(ssl, "example.com.crt"), "utf8")).toBe(before["example.com.crt"]);
    expect(readFileSync(join(ssl, "example.com.key"), "utf8")).toBe(before["example.com.key"]);
  });
});

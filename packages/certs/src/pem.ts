import { createPrivateKey, type KeyObject, X509Certificate } from "node:crypto";
import { UsageError } from "@mcops/core/errors";

/**
 * What an operator pastes: the certificate and the key Cloudflare shows in the browser, often copied on Windows (a
 * byte-order mark, CRLF line ends, trailing spaces). Cleaned to what nginx reads, then parsed with Node's own X.509 and
 * key objects: never openssl on the command line.
 */

/** A byte-order mark dropped, CRLF and lone CR made LF, trailing white space of each line dropped, one final newline. */
export function cleanPaste(text: string): string {
  return `${text
    .replace(/^\uFEFF/, "")
    .replace(/\r\n?/g, "\n")
    .split("\n")
    // White space a browser or an editor adds (indentation, no-break spaces, tabs): none belongs in a PEM line but in
    // the BEGIN/END labels, whose inner spaces stay.
    .map((line) => {
      const trimmed = line.replace(/^[\s\u00A0]+|[\s\u00A0]+$/g, "");
      return trimmed.startsWith("-----") ? trimmed : trimmed.replace(/[\s\u00A0]+/g, "");
    })
    .join("\n")
    .trim()}\n`;
}

export interface PemBlock {
  label: string;
  /** The block as nginx reads it, BEGIN to END, with its newline. */
  text: string;
}

const BLOCK = /-----BEGIN ([A-Z0-9 ]{1,40})-----\n([A-Za-z0-9+/=\n]{1,65536}?)-----END \1-----\n?/g;

/** The PEM blocks of a cleaned text, in order. */
export function pemBlocks(text: string): PemBlock[] {
  return [...text.matchAll(BLOCK)].map((m) => ({ label: m[1] as string, text: `${m[0].replace(/\n?$/, "")}\n` }));
}

const KEY_LABELS = new Set(["PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY"]);

/** The certificate (and any chain after it) and the key, from one text or two; one line for what is wrong. */
export function readPair(certText: string, keyText: string, where: { cert: string; key: string }) {
  const certBlocks = pemBlocks(cleanPaste(certText)).filter((b) => b.label === "CERTIFICATE");
  const keyBlocks = pemBlocks(cleanPaste(keyText)).filter((b) => KEY_LABELS.has(b.label));
  if (certBlocks.length === 0) {
    throw new UsageError(`${where.cert} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`, {
      hint: "paste the Origin Certificate exactly as Cloudflare shows it (SSL/TLS → Origin Server)",
    });
  }
  if (/-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type: *4, *ENCRYPTED/.test(keyText)) {
    throw new UsageError(`${where.key}'s private key is encrypted`, {
      hint: "nginx could not read it at boot without a passphrase: use the unencrypted key Cloudflare showed",
    });
  }
  if (keyBlocks.length !== 1) {
    throw new UsageError(
      keyBlocks.length === 0
        ? `${where.key} holds no PEM private key (-----BEGIN PRIVATE KEY-----)`
        : `${where.key} holds ${keyBlocks.length} private keys`,
      { hint: "paste the Private Key Cloudflare showed when the certificate was created (it is shown only once)" },
    );
  }
  let certificate: X509Certificate;
  let key: KeyObject;
  try {
    certificate = new X509Certificate((certBlocks[0] as PemBlock).text);
  } catch (error) {
    throw new UsageError(`${where.cert}'s certificate does not parse (${(error as Error).message})`, {
      hint: "copy it again: a line may be missing or changed",
    });
  }
  try {
    key = createPrivateKey((keyBlocks[0] as PemBlock).text);
  } catch (error) {
    throw new UsageError(`${where.key}'s key does not parse (${(error as Error).message})`, {
      hint: "copy it again; an encrypted key is not taken (nginx could not read it at boot)",
    });
  }
  checkChain(
    certBlocks.map((b) => b.text),
    where.cert,
  );
  return {
    certificate,
    key,
    certPem: certBlocks.map((b) => b.text).join(""),
    keyPem: (keyBlocks[0] as PemBlock).text,
  };
}

/** The names a certificate is for: its subject alternative names (DNS), else its common name. */
export function certificateNames(certificate: X509Certificate): string[] {
  const alt = (certificate.subjectAltName ?? "")
    .split(/,\s*/)
    .filter((n) => n.startsWith("DNS:"))
    .map((n) => n.slice(4));
  if (alt.length) return alt;
  const cn = /(?:^|\n)CN=([^\n]+)/.exec(certificate.subject)?.[1];
  return cn ? [cn] : [];
}

/** Certificates after the first must be its chain: each issued the one before it. */
function checkChain(blocks: string[], where: string): void {
  for (let i = 1; i < blocks.length; i++) {
    let child: X509Certificate;
    let parent: X509Certificate;
    try {
      child = new X509Certificate(blocks[i - 1] as string);
      parent = new X509Certificate(blocks[i] as string);
    } catch (error) {
      throw new UsageError(`${where}'s certificate number ${i + 1} does not parse (${(error as Error).message})`);
    }
    if (!child.checkIssued(parent) || !child.verify(parent.publicKey)) {
      throw new UsageError(`${where}'s certificate number ${i + 1} did not issue the one before it: not a chain`, {
        hint: "paste the origin certificate alone (Cloudflare's has no chain)",
      });
    }
  }
}

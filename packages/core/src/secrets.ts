/**
 * Process-wide registry of secret values (panel key, webhook token, cloud tokens, repository password). Config
 * loaders register what they read; the logger and the error printer pass every line through `redact`, so a secret
 * that slips into a message is still never written out.
 */
const secrets = new Set<string>();

/** Values shorter than this are not treated as secrets: replacing them would mangle ordinary text. */
const MIN_SECRET_LENGTH = 6;

export function registerSecret(value: string | undefined): void {
  if (value && value.length >= MIN_SECRET_LENGTH) secrets.add(value);
}

export function redact(text: string): string {
  let out = text;
  for (const secret of secrets) {
    if (out.includes(secret)) out = out.replaceAll(secret, "***");
  }
  return out;
}

/** For tests: forget every registered secret. */
export function clearSecrets(): void {
  secrets.clear();
}

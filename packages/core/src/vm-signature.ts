/**
 * How the VM and the Worker trust each other (issue 19): each request the VM sends (a heartbeat, a hibernate request)
 * carries the time it was made, in milliseconds, and an HMAC-SHA256 of `<time>.<body>` under the secret they share
 * (VM_SECRET in the Worker, WORKER_SECRET in the VM's backup.env). The Worker refuses a request whose signature does not verify,
 * that is more than five minutes from its own clock, or that is not newer than the last one it accepted: a request
 * seen on the wire cannot be sent again. WebCrypto only, so the same code runs on Node and in workerd.
 */
export const VM_HEADERS = { timestamp: "x-mcops-timestamp", signature: "x-mcops-signature" } as const;

/** How far the VM's clock and the Worker's may differ. */
export const VM_MAX_SKEW_MS = 5 * 60_000;

const encoder = new TextEncoder();

function key(secret: string, usage: "sign" | "verify") {
  return crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [usage]);
}

function hex(bytes: ArrayBuffer): string {
  return [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Bytes from hex; undefined when it is not an even number of hex digits. */
export function fromHex(text: string): Uint8Array | undefined {
  if (!/^(?:[0-9a-f]{2})+$/i.test(text)) return undefined;
  const bytes = new Uint8Array(text.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(text.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

/** The headers that sign `body`, made at `timestampMs`. */
export async function signVmRequest(
  secret: string,
  body: string,
  timestampMs: number,
): Promise<Record<string, string>> {
  const mac = await crypto.subtle.sign("HMAC", await key(secret, "sign"), encoder.encode(`${timestampMs}.${body}`));
  return { [VM_HEADERS.timestamp]: String(timestampMs), [VM_HEADERS.signature]: hex(mac) };
}

export type VmCheck = { ok: true; timestamp: number } | { ok: false; reason: string };

/**
 * Whether a request from the VM is genuine and fresh: signed with the secret, within VM_MAX_SKEW_MS of `now`, and
 * newer than `lastAccepted` (the timestamp of the last request accepted: a replay is refused).
 */
export async function verifyVmRequest(
  secret: string,
  body: string,
  headers: { get(name: string): string | null },
  now: number,
  lastAccepted: number,
): Promise<VmCheck> {
  const stamp = headers.get(VM_HEADERS.timestamp) ?? "";
  const signature = fromHex(headers.get(VM_HEADERS.signature) ?? "");
  if (!/^\d{1,16}$/.test(stamp) || !signature || signature.length !== 32) return { ok: false, reason: "not signed" };
  const timestamp = Number(stamp);
  const valid = await crypto.subtle.verify(
    "HMAC",
    await key(secret, "verify"),
    signature,
    encoder.encode(`${stamp}.${body}`),
  );
  if (!valid) return { ok: false, reason: "bad signature" };
  if (Math.abs(now - timestamp) > VM_MAX_SKEW_MS) return { ok: false, reason: "stale (clocks more than 5 min apart?)" };
  if (timestamp <= lastAccepted) return { ok: false, reason: "replayed" };
  return { ok: true, timestamp };
}

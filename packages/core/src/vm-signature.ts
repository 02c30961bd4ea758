/**
 * How the VM and the Worker trust each other (issue 19, bound to the request in issue 30): each request the VM sends
 * (a heartbeat, a hibernate request) carries the time it was made, in milliseconds, and an HMAC-SHA256 under the
 * secret they share (VM_SECRET in the Worker, WORKER_SECRET in the VM's backup.env) of
 *
 *     v2:<METHOD>\n<path>\n<time>\n<body>
 *
 * so a signed heartbeat cannot be posted to /vm/hibernate (or anywhere else) and be taken there. The Worker refuses a
 * request whose signature does not verify, that is more than five minutes old or more than 30 seconds ahead of its own
 * clock (a request dated ahead would otherwise move the replay mark and lock the VM's real requests out), or that is
 * not newer than the last one it accepted: a request seen on the wire cannot be sent again. WebCrypto only, so the same
 * code runs on Node and in workerd.
 */
export const VM_HEADERS = { timestamp: "x-mcops-timestamp", signature: "x-mcops-signature" } as const;

/** How old a request may be by the Worker's clock. */
export const VM_MAX_SKEW_MS = 5 * 60_000;
/** How far ahead of the Worker's clock a request may be dated. */
export const VM_MAX_AHEAD_MS = 30_000;

/** What a signature covers besides the time: the request's method, its path (no query), its body. */
export interface VmRequest {
  method: string;
  path: string;
  body: string;
}

const encoder = new TextEncoder();

function key(secret: string, usage: "sign" | "verify") {
  return crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [usage]);
}

/** The signed text (version 2): every part on its own line, the body last (it may hold newlines). */
function signedText(request: VmRequest, stamp: string): Uint8Array {
  return encoder.encode(`v2:${request.method.toUpperCase()}\n${request.path}\n${stamp}\n${request.body}`);
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

/** The headers that sign `request`, made at `timestampMs`. */
export async function signVmRequest(
  secret: string,
  request: VmRequest,
  timestampMs: number,
): Promise<Record<string, string>> {
  const stamp = String(timestampMs);
  const mac = await crypto.subtle.sign("HMAC", await key(secret, "sign"), signedText(request, stamp));
  return { [VM_HEADERS.timestamp]: stamp, [VM_HEADERS.signature]: hex(mac) };
}

export type VmCheck = { ok: true; timestamp: number } | { ok: false; reason: string };

/**
 * Whether a request from the VM is genuine and fresh: signed with the secret for this method, path and body, at most
 * VM_MAX_SKEW_MS older than `now` and at most VM_MAX_AHEAD_MS ahead of it, and newer than `lastAccepted` (the timestamp
 * of the last request accepted: a replay is refused).
 */
export async function verifyVmRequest(
  secret: string,
  request: VmRequest,
  headers: { get(name: string): string | null },
  now: number,
  lastAccepted: number,
): Promise<VmCheck> {
  const stamp = headers.get(VM_HEADERS.timestamp) ?? "";
  const signature = fromHex(headers.get(VM_HEADERS.signature) ?? "");
  if (!/^\d{1,16}$/.test(stamp) || !signature || signature.length !== 32) return { ok: false, reason: "not signed" };
  const timestamp = Number(stamp);
  const valid = await crypto.subtle.verify("HMAC", await key(secret, "verify"), signature, signedText(request, stamp));
  if (!valid) return { ok: false, reason: "bad signature (not this secret, method, path or body)" };
  if (now - timestamp > VM_MAX_SKEW_MS) return { ok: false, reason: "stale (clocks more than 5 min apart?)" };
  if (timestamp - now > VM_MAX_AHEAD_MS)
    return { ok: false, reason: "dated ahead (the VM's clock more than 30 s fast?)" };
  if (timestamp <= lastAccepted) return { ok: false, reason: "replayed" };
  return { ok: true, timestamp };
}

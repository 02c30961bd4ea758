import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { signVmRequest, VM_HEADERS, type VmRequest, verifyVmRequest } from "../src/vm-signature.ts";

const SECRET = "a test secret shared by the VM and the Worker";
const NOW = Date.UTC(2026, 10, 21, 12, 0, 0);
const BEAT: VmRequest = { method: "POST", path: "/vm/heartbeat", body: '{"serverState":"running","players":[]}' };

const headersOf = (record: Record<string, string>) => new Headers(record);
const check = async (signed: VmRequest, received: VmRequest, at = NOW, lastAccepted = 0) =>
  verifyVmRequest(SECRET, received, headersOf(await signVmRequest(SECRET, signed, at)), NOW, lastAccepted);

describe("the VM's request signature", () => {
  it("is an HMAC-SHA256 of v2:<METHOD>\\n<path>\\n<time>\\n<body>, in hex", async () => {
    const headers = await signVmRequest(SECRET, BEAT, NOW);
    const expected = createHmac("sha256", SECRET).update(`v2:POST\n/vm/heartbeat\n${NOW}\n${BEAT.body}`).digest("hex");
    expect(headers).toEqual({ [VM_HEADERS.timestamp]: String(NOW), [VM_HEADERS.signature]: expected });
    expect(await check(BEAT, BEAT)).toEqual({ ok: true, timestamp: NOW });
  });

  it("does not verify for another path, method or body than the one signed", async () => {
    const bad = { ok: false, reason: expect.stringMatching(/^bad signature/) };
    expect(await check(BEAT, { ...BEAT, path: "/vm/hibernate" })).toEqual(bad);
    expect(await check(BEAT, { ...BEAT, method: "PUT" })).toEqual(bad);
    expect(await check(BEAT, { ...BEAT, body: `${BEAT.body} ` })).toEqual(bad);
  });

  it("refuses a signature of the time and body alone (version 1)", async () => {
    const v1 = createHmac("sha256", SECRET).update(`${NOW}.${BEAT.body}`).digest("hex");
    const headers = headersOf({ [VM_HEADERS.timestamp]: String(NOW), [VM_HEADERS.signature]: v1 });
    expect((await verifyVmRequest(SECRET, BEAT, headers, NOW, 0)).ok).toBe(false);
  });

  it("takes a request up to 5 minutes old and up to 30 s ahead, and refuses beyond either", async () => {
    expect((await check(BEAT, BEAT, NOW - 5 * 60_000)).ok).toBe(true);
    expect(await check(BEAT, BEAT, NOW - 5 * 60_000 - 1)).toMatchObject({ ok: false, reason: /^stale/ });
    expect((await check(BEAT, BEAT, NOW + 30_000)).ok).toBe(true);
    expect(await check(BEAT, BEAT, NOW + 30_001)).toMatchObject({ ok: false, reason: /^dated ahead/ });
    expect(await check(BEAT, BEAT, NOW + 299_000)).toMatchObject({ ok: false, reason: /^dated ahead/ });
  });

  it("refuses a request not newer than the last one accepted", async () => {
    expect(await check(BEAT, BEAT, NOW, NOW)).toEqual({ ok: false, reason: "replayed" });
    expect((await check(BEAT, BEAT, NOW, NOW - 1)).ok).toBe(true);
  });
});

/**
 * A statfs stand-in (the shape of @mcops/core's StatFs; testkit does not depend on core): a filesystem of a million
 * 4 KiB blocks (3.8 GiB), `freeRatio` of them available. A test that is not about free space gives the tool this, so
 * that the machine's own disk cannot change what it sees: CI's disk was 9.4 % free once, below DISK_WARN, and every
 * idle decision then posted a warning the test did not expect.
 */
export function statfsWithFree(freeRatio: number): (path: string) => { bavail: number; blocks: number; bsize: number } {
  return () => ({ bsize: 4096, blocks: 1_000_000, bavail: Math.round(freeRatio * 1_000_000) });
}

import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type Server, startServer } from "./harness.ts";

let server: Server;

afterEach(async () => {
  await server?.close();
});

describe("the backup log named in restic's hints", () => {
  it("is where MCOPS_LOG_DIR puts it, not /var/log", async () => {
    server = await startServer();
    // A restic that fails the way a damaged repository makes it fail, found first on PATH.
    const bin = join(server.root, "bin");
    mkdirSync(bin);
    writeFileSync(join(bin, "restic"), "#!/bin/sh\necho 'Fatal: pack 1a2b3c4d is damaged' >&2\nexit 1\n");
    chmodSync(join(bin, "restic"), 0o755);
    expect(server.env.MCOPS_LOG_DIR).toBe(server.logDir);
    const result = await server.run(["check"], { PATH: `${bin}:${server.env.PATH}` });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `backup: restic failed (exit 1): pack 1a2b3c4d is damaged (rclone:mcopstest:${server.repoDir}) — see ${join(server.logDir, "mc-backup.log")} for restic's full output\n`,
    );
  });
});

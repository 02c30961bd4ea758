import { readFileSync } from "node:fs";
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Server, startServer } from "./harness.ts";

let server: Server;
let pings: HttpServer;
let pinged: string[];
let pingUrl: string;
/** How the endpoint answers the next pings (then 200 OK). */
let answers: Array<{ status: number; headers?: Record<string, string> }>;

beforeEach(async () => {
  server = await startServer();
  expect((await server.run(["init"])).code).toBe(0);
  pinged = [];
  answers = [];
  // A Healthchecks-style endpoint: it records which path was pinged.
  pings = createServer((req, res) => {
    pinged.push(`${req.method} ${req.url}`);
    const answer = answers.shift() ?? { status: 200 };
    res.writeHead(answer.status, answer.headers ?? {});
    res.end(answer.status === 200 ? "OK" : "busy");
  });
  await new Promise<void>((resolve) => pings.listen(0, "127.0.0.1", resolve));
  pingUrl = `http://127.0.0.1:${(pings.address() as AddressInfo).port}/ping/abc`;
});

afterEach(async () => {
  await new Promise((resolve) => pings.close(resolve));
  await server.close();
});

describe("dead-man's switch and Prometheus textfile", () => {
  it("pings /start then the URL itself, and writes the metrics of a success", async () => {
    const textfiles = join(server.root, "textfiles");
    server.backupEnv({ BACKUP_PING_URL: pingUrl, BACKUP_TEXTFILE_DIR: textfiles });
    expect((await server.run()).code).toBe(0);
    expect(pinged).toEqual(["POST /ping/abc/start", "POST /ping/abc"]);
    const prom = readFileSync(join(textfiles, "mcops_backup.prom"), "utf8");
    const id = server.panel.server.identifier;
    expect(prom).toMatch(new RegExp(`^mcops_backup_last_run_success\\{server="${id}"\\} 1$`, "m"));
    expect(prom).toMatch(/^mcops_backup_last_success_timestamp_seconds\{server="\w+"\} \d{10}$/m);
    expect(prom).toMatch(/^mcops_backup_duration_seconds\{server="\w+"\} \d+\.\d{3}$/m);
    expect(prom).toMatch(/^mcops_backup_repository_bytes\{server="\w+"\} [1-9]\d*$/m);
    expect(prom).toMatch(/^mcops_backup_autosave_off_seconds\{server="\w+"\} \d+\.\d{3}$/m);
  });

  it("pings under the request policy: a 503 is tried again, an hour's rate limit is not waited for", async () => {
    server.backupEnv({ BACKUP_PING_URL: pingUrl });
    answers = [
      { status: 503, headers: { "retry-after": "0" } },
      { status: 200 },
      { status: 429, headers: { "retry-after": "3600" } },
    ];
    expect((await server.run()).code).toBe(0);
    expect(pinged).toEqual(["POST /ping/abc/start", "POST /ping/abc/start", "POST /ping/abc"]);
    expect(server.backupLog()).toMatch(/WARN dead-man's-switch ping success failed \(answered 429\)/);
  });

  it("pings /fail with the reason when the backup fails, and records the failure", async () => {
    const textfiles = join(server.root, "textfiles");
    server.backupEnv({
      BACKUP_PING_URL: pingUrl,
      BACKUP_TEXTFILE_DIR: textfiles,
      RESTIC_REPOSITORY: "rclone:mcopstest:/nonexistent/repo",
    });
    expect((await server.run()).code).toBe(1);
    expect(pinged).toEqual(["POST /ping/abc/start", "POST /ping/abc/fail"]);
    const prom = readFileSync(join(textfiles, "mcops_backup.prom"), "utf8");
    expect(prom).toMatch(/^mcops_backup_last_run_success\{server="\w+"\} 0$/m);
    expect(prom).not.toMatch(/last_success_timestamp/);
  });

  it("keeps the last success's figures in the textfile when a later backup fails", async () => {
    const textfiles = join(server.root, "textfiles");
    server.backupEnv({ BACKUP_TEXTFILE_DIR: textfiles });
    expect((await server.run()).code).toBe(0);
    const file = join(textfiles, "mcops_backup.prom");
    const success = readFileSync(file, "utf8");
    const figures = (prom: string) =>
      prom
        .split("\n")
        .filter((l) =>
          /^mcops_backup_(last_success_timestamp_seconds|added_bytes|repository_bytes|autosave_off_seconds)\{/.test(l),
        );
    expect(figures(success)).toHaveLength(4);

    server.backupEnv({ BACKUP_TEXTFILE_DIR: textfiles, RESTIC_REPOSITORY: "rclone:mcopstest:/nonexistent/repo" });
    expect((await server.run()).code).toBe(1);
    const failure = readFileSync(file, "utf8");
    expect(failure).toMatch(/^mcops_backup_last_run_success\{server="\w+"\} 0$/m);
    expect(failure).toMatch(/^mcops_backup_duration_seconds\{server="\w+"\} \d+\.\d{3}$/m);
    expect(figures(failure)).toEqual(figures(success));
    expect(failure).toMatch(/^# TYPE mcops_backup_last_success_timestamp_seconds gauge$/m);
    // Each metric once: what the failed run wrote and what it carried over never overlap.
    const samples = failure
      .split("\n")
      .filter((l) => l && !l.startsWith("#"))
      .map((l) => l.split("{")[0]);
    expect(new Set(samples).size).toBe(samples.length);
  });

  it("never fails the backup because the ping host is down", async () => {
    await new Promise((resolve) => pings.close(resolve));
    pings = createServer();
    server.backupEnv({ BACKUP_PING_URL: pingUrl });
    const result = await server.run();
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/WARN dead-man's-switch ping start failed/);
  });
});

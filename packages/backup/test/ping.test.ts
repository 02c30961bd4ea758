import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { silentLogger } from "@mcops/core/log";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ping } from "../src/reporting.ts";

/**
 * The dead-man's-switch addresses Healthchecks gives with a query (https://healthchecks.io/docs/http_api/): a slug
 * address that creates its check on first use (`?create=1`) and a run id pairing a start with its end (`?rid=`). The
 * endpoint records the path and query each ping arrives at.
 */
let server: Server;
let base: string;
let pinged: string[];

beforeAll(async () => {
  server = createServer((req, res) => {
    pinged.push(`${req.method} ${req.url}`);
    req.resume();
    res.end("OK");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));
beforeEach(() => {
  pinged = [];
});

describe("dead-man's-switch ping addresses", () => {
  it("puts /start and /fail before the query string (issue 31)", async () => {
    const slug = `${base}/ping/key/backup-mc?create=1`;
    await ping(slug, "start", silentLogger);
    await ping(slug, "success", silentLogger);
    await ping(slug, "fail", silentLogger, "restic failed");
    const rid = `${base}/ping/abc/?rid=123e4567-e89b-12d3-a456-426614174000`;
    await ping(rid, "start", silentLogger);
    expect(pinged).toEqual([
      "POST /ping/key/backup-mc/start?create=1",
      "POST /ping/key/backup-mc?create=1",
      "POST /ping/key/backup-mc/fail?create=1",
      "POST /ping/abc/start?rid=123e4567-e89b-12d3-a456-426614174000",
    ]);
  });

  it("appends to a plain address as before", async () => {
    await ping(`${base}/ping/abc/`, "start", silentLogger);
    await ping(`${base}/ping/abc`, "fail", silentLogger);
    expect(pinged).toEqual(["POST /ping/abc/start", "POST /ping/abc/fail"]);
  });
});

import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MODRINTH_ROUTES, type ModrinthStandIn, startModrinthStandIn } from "../src/modrinth.ts";

let stand: ModrinthStandIn;

beforeAll(async () => {
  stand = await startModrinthStandIn({
    projects: [
      {
        id: "AANobbMI",
        slug: "sodium",
        versions: [
          {
            id: "V1000002",
            versionNumber: "0.6.1",
            gameVersions: ["1.21.4"],
            loaders: ["fabric"],
            featured: true,
            files: [{ filename: "sodium-0.6.1.jar" }],
          },
          {
            id: "V1000001",
            versionNumber: "0.6.0",
            gameVersions: ["1.21.1"],
            loaders: ["neoforge"],
            files: [{ filename: "sodium-0.6.0.jar", bytes: Buffer.from("PK\u0003\u0004 neoforge") }],
          },
        ],
      },
    ],
  });
});
afterAll(() => stand.close());

describe("Modrinth stand-in", () => {
  it("names a source for every route", () => {
    for (const route of MODRINTH_ROUTES) expect(route.source.length, route.path).toBeGreaterThan(20);
  });

  it("lists a project's versions by id or slug, filtered by loaders and game versions, with the rate-limit headers", async () => {
    const query = `loaders=${encodeURIComponent('["fabric"]')}&game_versions=${encodeURIComponent('["1.21.4"]')}`;
    for (const project of ["sodium", "AANobbMI"]) {
      const response = await fetch(`${stand.api}/v2/project/${project}/version?${query}`);
      expect(response.status).toBe(200);
      expect(response.headers.get("x-ratelimit-limit")).toBe("300");
      expect(response.headers.get("x-ratelimit-remaining")).toMatch(/^\d+$/);
      expect(response.headers.get("x-ratelimit-reset")).toMatch(/^\d+$/);
      const versions = (await response.json()) as Array<{
        id: string;
        files: Array<{ url: string; primary: boolean }>;
      }>;
      expect(versions.map((v) => v.id)).toEqual(["V1000002"]);
      expect(versions[0]?.files[0]).toMatchObject({
        url: "https://cdn.modrinth.com/data/AANobbMI/versions/V1000002/sodium-0.6.1.jar",
        primary: true,
      });
    }
  });

  it("answers one version, and a 404 without a body for what it does not have (labrinth's v2 routes)", async () => {
    const version = (await (await fetch(`${stand.api}/v2/version/V1000001`)).json()) as Record<string, unknown>;
    expect(version).toMatchObject({
      id: "V1000001",
      project_id: "AANobbMI",
      version_number: "0.6.0",
      loaders: ["neoforge"],
    });
    for (const path of ["/v2/version/NOPE0000", "/v2/project/nope/version"]) {
      const response = await fetch(`${stand.api}${path}`);
      expect(response.status).toBe(404);
      expect(await response.text()).toBe("");
      expect(response.headers.get("x-ratelimit-limit")).toBe("300");
    }
    const route = await fetch(`${stand.api}/v2/nothing`);
    expect([route.status, await route.json()]).toEqual([
      404,
      { error: "not_found", description: "the requested route does not exist" },
    ]);
  });

  it("limits the API as labrinth's GCRA does: the burst and one more, then 429 with the whole window as the reset", async () => {
    let now = 1_000_000;
    const limited = await startModrinthStandIn({ rateLimit: { limit: 3, windowMs: 3000 }, now: () => now });
    try {
      const ask = async () => {
        const r = await fetch(`${limited.api}/v2/version/NOPE0000`);
        const headers = ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset", "retry-after"];
        return [r.status, ...headers.map((h) => r.headers.get(h)), r.status === 429 ? await r.json() : await r.text()];
      };
      // One request every 1000 ms, a burst of 3: four at once go through (the TAT 4 s ahead), the fifth does not.
      expect(await ask()).toEqual([404, "3", "2", "1", null, ""]);
      expect(await ask()).toEqual([404, "3", "1", "2", null, ""]);
      expect(await ask()).toEqual([404, "3", "0", "3", null, ""]);
      expect(await ask()).toEqual([404, "3", "0", "4", null, ""]);
      const refused = [
        429,
        "3",
        "0",
        "4",
        null,
        { error: "ratelimit_error", description: "rate limit exceeded; retry after 1000 milliseconds" },
      ];
      expect(await ask()).toEqual(refused);
      // A refused request does not move the bucket: a second later one more goes through.
      now += 1000;
      expect((await ask())[0]).toBe(404);
      expect((await ask())[0]).toBe(429);
    } finally {
      await limited.close();
    }
  });

  it("exhaust(): the next API request, whenever it comes, is the 429 of a used-up minute (reset 60, no Retry-After)", async () => {
    let now = 5_000_000;
    const limited = await startModrinthStandIn({ now: () => now });
    try {
      limited.exhaust();
      now += 30_000;
      const response = await fetch(`${limited.api}/v2/version/NOPE0000`);
      expect(response.status).toBe(429);
      expect(response.headers.get("x-ratelimit-limit")).toBe("300");
      expect(response.headers.get("x-ratelimit-remaining")).toBe("0");
      expect(response.headers.get("x-ratelimit-reset")).toBe("60");
      expect(response.headers.get("retry-after")).toBeNull();
      expect(response.headers.get("access-control-allow-origin")).toBe("*");
      expect((await fetch(`${limited.cdn}/data/x/versions/y/z.jar`)).status).toBe(404);
      now += 60_000;
      expect((await fetch(`${limited.api}/v2/version/NOPE0000`)).status).toBe(404);
    } finally {
      await limited.close();
    }
  });

  it("serves each file from its CDN address with the hashes the API gives, and the mapped address reaches it", async () => {
    const file = stand.file("AANobbMI", "V1000001", "sodium-0.6.0.jar");
    const version = (await (await fetch(`${stand.api}/v2/version/V1000001`)).json()) as {
      files: Array<{ hashes: { sha1: string; sha512: string }; size: number }>;
    };
    expect(version.files[0]).toMatchObject({ hashes: { sha1: file.sha1, sha512: file.sha512 }, size: file.size });
    const mapped = file.url.replace("https://cdn.modrinth.com", stand.hostMap["https://cdn.modrinth.com"] ?? "");
    const body = Buffer.from(await (await fetch(mapped)).arrayBuffer());
    expect(body).toEqual(file.bytes);
    expect(createHash("sha512").update(body).digest("hex")).toBe(file.sha512);
    expect((await fetch(`${stand.cdn}/data/AANobbMI/versions/V1000001/other.jar`)).status).toBe(404);
  });
});

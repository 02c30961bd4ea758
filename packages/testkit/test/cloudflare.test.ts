import { afterEach, describe, expect, it } from "vitest";
import type { CloudflareStandIn, CloudflareStandInOptions } from "../src/cloudflare.ts";
import { startCloudflareStandIn } from "../src/cloudflare.ts";

let cf: CloudflareStandIn | undefined;

afterEach(async () => {
  await cf?.close();
  cf = undefined;
});

async function start(options?: CloudflareStandInOptions): Promise<CloudflareStandIn> {
  cf = await startCloudflareStandIn(options);
  return cf;
}

function api(
  c: CloudflareStandIn,
  path: string,
  init: { method?: string; body?: unknown; token?: string | null; headers?: Record<string, string> } = {},
): Promise<Response> {
  const headers: Record<string, string> = { ...init.headers };
  const token = init.token === undefined ? c.token : init.token;
  if (token !== null) headers.Authorization = `Bearer ${token}`;
  if (init.body !== undefined) headers["Content-Type"] = "application/json";
  return fetch(`${c.url}/client/v4${path}`, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers,
    body: init.body === undefined ? undefined : typeof init.body === "string" ? init.body : JSON.stringify(init.body),
  });
}

// biome-ignore lint/suspicious/noExplicitAny: the answer's JSON as the vendor documents it; a wrong guess at its shape fails the assertion that reads it
const json = (res: Response): Promise<any> => res.json();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const failure = (...errors: unknown[]) => ({ success: false, errors, messages: [], result: null });
const zoneId = (c: CloudflareStandIn, name = "example.co.uk"): string => {
  const zone = c.zones().find((z) => z.name === name);
  if (!zone) throw new Error(`no zone ${name}`);
  return zone.id;
};
const recordsPath = (c: CloudflareStandIn, zone?: string) => `/zones/${zoneId(c, zone)}/dns_records`;
const create = (c: CloudflareStandIn, body: unknown, zone?: string) => api(c, recordsPath(c, zone), { body });
const WRONG_TOKEN = "Sn3lZJTBX6kkg7OdcBUAxOO963GEIyGQqnFTOFYY";
const HEX32 = /^[0-9a-f]{32}$/;

describe("token verification", () => {
  it("verifies an active token with the documented envelope", async () => {
    const c = await start();
    expect(c.token).toMatch(/^[A-Za-z0-9]{40}$/);
    expect(c.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await api(c, "/user/tokens/verify");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    const body = await json(res);
    expect(body).toEqual({
      success: true,
      errors: [],
      messages: [{ code: 10000, message: "This API Token is valid and active", type: null }],
      result: { id: expect.stringMatching(HEX32), status: "active" },
    });
  });

  it("verifies an account-owned token only on its account, while every zone call works", async () => {
    const c = await start({ tokenOwner: "account" });
    const user = await api(c, "/user/tokens/verify");
    expect(user.status).toBe(401);
    expect((await json(user)).errors).toEqual([{ code: 1000, message: "Invalid API Token" }]);
    const zones = await json(await api(c, "/zones?name=example.co.uk"));
    const account = zones.result[0].account.id as string;
    expect(account).toMatch(HEX32);
    const verify = await api(c, `/accounts/${account}/tokens/verify`);
    expect(verify.status).toBe(200);
    expect((await json(verify)).result).toEqual({ id: expect.stringMatching(HEX32), status: "active" });
    expect((await api(c, `/accounts/${"0".repeat(32)}/tokens/verify`)).status).toBe(401);
    // A user token is unknown on an account's verify route.
    const userToken = await startCloudflareStandIn();
    try {
      expect((await api(userToken, `/accounts/${account}/tokens/verify`)).status).toBe(401);
    } finally {
      await userToken.close();
    }
  });

  it("says expired or disabled, and other calls are refused with 9109", async () => {
    const c = await start({ tokenStatus: "expired", token: "my-test-token" });
    const verify = await json(await api(c, "/user/tokens/verify"));
    expect(verify.success).toBe(true);
    expect(verify.messages).toEqual([]);
    expect(verify.result.status).toBe("expired");
    expect(Date.parse(verify.result.expires_on)).toBeLessThan(Date.now());
    const zones = await api(c, "/zones");
    expect(zones.status).toBe(403);
    expect(await json(zones)).toEqual(failure({ code: 9109, message: "Invalid access token" }));

    c.setTokenStatus("disabled");
    expect((await json(await api(c, "/user/tokens/verify"))).result).toEqual({
      id: expect.stringMatching(HEX32),
      status: "disabled",
    });
    expect((await api(c, recordsPath(c))).status).toBe(403);
    c.setTokenStatus("active");
    expect((await api(c, "/zones")).status).toBe(200);
  });

  it("answers an unknown token 401 code 1000 at verify and 403 code 9109 elsewhere", async () => {
    const c = await start();
    const verify = await api(c, "/user/tokens/verify", { token: WRONG_TOKEN });
    expect(verify.status).toBe(401);
    expect(await json(verify)).toEqual(failure({ code: 1000, message: "Invalid API Token" }));
    const zones = await api(c, "/zones?name=example.co.uk", { token: WRONG_TOKEN });
    expect(zones.status).toBe(403);
    expect(await json(zones)).toEqual(failure({ code: 9109, message: "Invalid access token" }));
  });

  it("answers missing or malformed credentials 400", async () => {
    const c = await start();
    const missing = await api(c, "/user/tokens/verify", { token: null });
    expect(missing.status).toBe(400);
    expect(await json(missing)).toEqual(
      failure({ code: 9106, message: "Missing X-Auth-Key, X-Auth-Email or Authorization headers" }),
    );
    const malformed = await api(c, "/zones", { token: "abc-def" });
    expect(malformed.status).toBe(400);
    expect(await json(malformed)).toEqual(
      failure({
        code: 6003,
        message: "Invalid request headers",
        error_chain: [{ code: 6111, message: "Invalid format for Authorization header" }],
      }),
    );
    const basic = await api(c, "/zones", { token: null, headers: { Authorization: `Basic ${c.token}` } });
    expect((await json(basic)).errors[0].error_chain[0].code).toBe(6111);
    const key = await api(c, "/zones", { token: null, headers: { "X-Auth-Key": c.token, "X-Auth-Email": "a@b.c" } });
    expect(key.status).toBe(400);
    expect((await json(key)).errors[0].error_chain).toEqual([
      { code: 6103, message: "Invalid format for X-Auth-Key header" },
    ]);
  });
});

describe("zones", () => {
  it("finds a zone by exact name, case-insensitively, with result_info", async () => {
    const c = await start({ zones: [{ name: "example.co.uk" }, { name: "other.example" }] });
    const res = await api(c, "/zones?name=Example.CO.uk&status=active");
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body.success).toBe(true);
    expect(body.result_info).toEqual({ page: 1, per_page: 20, count: 1, total_count: 1, total_pages: 1 });
    expect(body.result).toHaveLength(1);
    expect(body.result[0]).toMatchObject({
      id: zoneId(c),
      name: "example.co.uk",
      status: "active",
      paused: false,
      type: "full",
      plan: { name: "Free Website" },
      permissions: ["#dns_records:edit", "#dns_records:read", "#zone:read"],
    });
    expect(zoneId(c)).toMatch(HEX32);
  });

  it("does not find a zone by a name inside it, nor with another status", async () => {
    const c = await start();
    for (const query of ["name=mc.example.co.uk", "name=co.uk", "name=example.co.uk&status=pending"]) {
      const body = await json(await api(c, `/zones?${query}`));
      expect(body.result).toEqual([]);
      expect(body.result_info).toEqual({ page: 1, per_page: 20, count: 0, total_count: 0, total_pages: 0 });
    }
    const ends = await json(await api(c, "/zones?name=ends_with:.co.uk"));
    expect(ends.result.map((z: { name: string }) => z.name)).toEqual(["example.co.uk"]);
  });

  it("pages through the zones (per_page at most 50)", async () => {
    const c = await start({ zones: [{ name: "a.example" }, { name: "b.example" }, { name: "c.example" }] });
    const page2 = await json(await api(c, "/zones?per_page=2&page=2"));
    expect(page2.result.map((z: { name: string }) => z.name)).toEqual(["c.example"]);
    expect(page2.result_info).toEqual({ page: 2, per_page: 2, count: 1, total_count: 3, total_pages: 2 });
    const big = await json(await api(c, "/zones?per_page=500"));
    expect(big.result_info.per_page).toBe(50);
  });

  it("answers one zone by id; an unknown id is an authentication error, a malformed one 7003", async () => {
    const c = await start();
    const one = await json(await api(c, `/zones/${zoneId(c)}`));
    expect(one.result.name).toBe("example.co.uk");
    const unknown = await api(c, `/zones/${"0".repeat(32)}/dns_records`);
    expect(unknown.status).toBe(403);
    expect(await json(unknown)).toEqual(
      failure({
        code: 10000,
        message: "Authentication error",
        documentation_url: "https://developers.cloudflare.com/api/resources/dns/subresources/records/methods/list/",
      }),
    );
    const malformed = await api(c, "/zones/example.co.uk/dns_records");
    expect(malformed.status).toBe(400);
    expect(await json(malformed)).toEqual(
      failure(
        {
          code: 7003,
          message:
            "Could not route to /client/v4/zones/example.co.uk/dns_records, perhaps your object identifier is invalid?",
        },
        { code: 7000, message: "No route for that URI" },
      ),
    );
  });
});

describe("listing DNS records", () => {
  const seeded: CloudflareStandInOptions = {
    records: [
      { zone: "example.co.uk", name: "mc", content: "203.0.113.10" },
      { zone: "example.co.uk", name: "mc.example.co.uk", type: "AAAA", content: "2001:DB8::10" },
      { zone: "example.co.uk", name: "mc", type: "TXT", content: "hello" },
      { zone: "example.co.uk", name: "www", content: "203.0.113.20", proxied: true, ttl: 300 },
    ],
  };

  it("filters by type and by the exact FQDN in name", async () => {
    const c = await start(seeded);
    const res = await api(c, `${recordsPath(c)}?type=A&name=mc.example.co.uk`);
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body.result_info).toEqual({ page: 1, per_page: 100, count: 1, total_count: 1, total_pages: 1 });
    expect(body.result).toEqual([
      {
        id: expect.stringMatching(HEX32),
        zone_id: zoneId(c),
        zone_name: "example.co.uk",
        name: "mc.example.co.uk",
        type: "A",
        content: "203.0.113.10",
        proxiable: true,
        proxied: false,
        ttl: 1,
        locked: false,
        meta: { auto_added: false, managed_by_apps: false, managed_by_argo_tunnel: false, source: "primary" },
        settings: {},
        comment: null,
        tags: [],
        created_on: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
        modified_on: expect.stringMatching(/Z$/),
      },
    ]);
    const names = async (query: string) =>
      (await json(await api(c, `${recordsPath(c)}?${query}`))).result.map(
        (r: { type: string; name: string }) => `${r.type} ${r.name}`,
      );
    expect(await names("name=mc")).toEqual([]);
    expect(await names("name=MC.example.co.uk.")).toEqual([
      "A mc.example.co.uk",
      "AAAA mc.example.co.uk",
      "TXT mc.example.co.uk",
    ]);
    expect(await names("type=A")).toEqual(["A mc.example.co.uk", "A www.example.co.uk"]);
    expect(await names("type=A&name=www.example.co.uk")).toEqual(["A www.example.co.uk"]);
    expect(await names("proxied=true")).toEqual(["A www.example.co.uk"]);
    expect(await names("match=any&type=TXT&name=www.example.co.uk")).toEqual([
      "TXT mc.example.co.uk",
      "A www.example.co.uk",
    ]);
    expect(await names("content=2001:db8::10")).toEqual(["AAAA mc.example.co.uk"]);
  });

  it("pages, keeps seeded values and answers one record by id", async () => {
    const c = await start(seeded);
    const page = await json(await api(c, `${recordsPath(c)}?per_page=3&page=2`));
    expect(page.result_info).toEqual({ page: 2, per_page: 3, count: 1, total_count: 4, total_pages: 2 });
    const www = c.records("example.co.uk").find((r) => r.name === "www.example.co.uk");
    // A proxied record's TTL is automatic.
    expect(www).toMatchObject({ proxied: true, ttl: 1 });
    expect(c.records(zoneId(c))).toHaveLength(4);
    const one = await json(await api(c, `${recordsPath(c)}/${www?.id}`));
    expect(one.result).toEqual(www);
  });
});

describe("writing DNS records", () => {
  it("creates an A record from a relative name", async () => {
    const c = await start();
    const res = await create(c, { type: "A", name: "play", content: "198.51.100.7", comment: "mcops" });
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body).toMatchObject({ success: true, errors: [], messages: [] });
    expect(body.result).toMatchObject({
      name: "play.example.co.uk",
      type: "A",
      content: "198.51.100.7",
      proxiable: true,
      proxied: false,
      ttl: 1,
      comment: "mcops",
      zone_name: "example.co.uk",
    });
    expect(c.records()).toEqual([body.result]);
    const apex = await json(await create(c, { type: "TXT", name: "@", content: "v=spf1 -all", ttl: 3600 }));
    expect(apex.result).toMatchObject({ name: "example.co.uk", proxiable: false, ttl: 3600 });
  });

  it("overwrites with PUT and edits with PATCH", async () => {
    const c = await start();
    const created = (await json(await create(c, { type: "A", name: "mc", content: "198.51.100.7", ttl: 120 }))).result;
    await sleep(2);
    const put = await api(c, `${recordsPath(c)}/${created.id}`, {
      method: "PUT",
      body: { type: "A", name: "mc.example.co.uk", content: "198.51.100.8", proxied: true },
    });
    expect(put.status).toBe(200);
    const replaced = (await json(put)).result;
    expect(replaced).toMatchObject({ id: created.id, content: "198.51.100.8", proxied: true, ttl: 1 });
    expect(replaced.created_on).toBe(created.created_on);
    expect(replaced.modified_on).not.toBe(created.modified_on);

    const patch = await api(c, `${recordsPath(c)}/${created.id}`, {
      method: "PATCH",
      body: { content: "198.51.100.9" },
    });
    expect(patch.status).toBe(200);
    expect((await json(patch)).result).toMatchObject({
      content: "198.51.100.9",
      proxied: true,
      name: "mc.example.co.uk",
    });
    const unproxied = await api(c, `${recordsPath(c)}/${created.id}`, {
      method: "PATCH",
      body: { proxied: false, ttl: 300 },
    });
    expect((await json(unproxied)).result).toMatchObject({ content: "198.51.100.9", proxied: false, ttl: 300 });

    // PUT without proxied/ttl resets them to the defaults.
    const reset = await api(c, `${recordsPath(c)}/${created.id}`, {
      method: "PUT",
      body: { type: "A", name: "mc", content: "198.51.100.9" },
    });
    expect((await json(reset)).result).toMatchObject({ proxied: false, ttl: 1 });
  });

  it("refuses an identical record and A/AAAA/CNAME clashes", async () => {
    const c = await start({ records: [{ zone: "example.co.uk", name: "mc", content: "203.0.113.10" }] });
    const duplicate = await create(c, { type: "A", name: "mc.example.co.uk", content: "203.0.113.10" });
    expect(duplicate.status).toBe(400);
    expect(await json(duplicate)).toEqual(failure({ code: 81058, message: "An identical record already exists." }));
    // A second A record with other content is allowed (round robin).
    expect((await create(c, { type: "A", name: "mc", content: "203.0.113.11" })).status).toBe(200);
    const cname = await json(await create(c, { type: "CNAME", name: "mc", content: "target.example.net" }));
    expect(cname.errors[0].code).toBe(81053);
    expect((await create(c, { type: "CNAME", name: "alias", content: "target.example.net." })).status).toBe(200);
    const a = await json(await create(c, { type: "A", name: "alias", content: "203.0.113.12" }));
    expect(a.errors[0]).toMatchObject({
      code: 81054,
      message: expect.stringMatching(/^A CNAME record with that host/),
    });
    // Updating a record to itself is not a duplicate; updating it onto another is.
    const first = c.records()[0];
    const same = await api(c, `${recordsPath(c)}/${first?.id}`, { method: "PATCH", body: { content: "203.0.113.10" } });
    expect(same.status).toBe(200);
    const onto = await api(c, `${recordsPath(c)}/${first?.id}`, { method: "PATCH", body: { content: "203.0.113.11" } });
    expect((await json(onto)).errors[0].code).toBe(81058);
  });

  it("answers invalid content for an A or AAAA record 400 with Cloudflare's envelope", async () => {
    const c = await start({ records: [{ zone: "example.co.uk", name: "mc", content: "203.0.113.10" }] });
    for (const content of ["256.1.1.1", "2001:db8::1", "mc.example.net", "203.0.113.010"]) {
      const res = await create(c, { type: "A", name: "bad", content });
      expect(res.status).toBe(400);
      expect(await json(res)).toEqual(
        failure({ code: 9005, message: "Content for A record must be a valid IPv4 address." }),
      );
    }
    const v6 = await json(await create(c, { type: "AAAA", name: "bad", content: "203.0.113.1" }));
    expect(v6.errors).toEqual([{ code: 9006, message: "Content for AAAA record must be a valid IPv6 address." }]);
    const id = c.records()[0]?.id;
    const patch = await api(c, `${recordsPath(c)}/${id}`, { method: "PATCH", body: { content: "not-an-ip" } });
    expect(patch.status).toBe(400);
    expect(c.records()[0]?.content).toBe("203.0.113.10");
  });

  it("checks TTL and proxied", async () => {
    const c = await start();
    for (const ttl of [30, 59, 86_401, 0, 1.5]) {
      const res = await create(c, {
        type: "A",
        name: `t${String(ttl).replace(".", "-")}`,
        content: "198.51.100.1",
        ttl,
      });
      expect(res.status).toBe(400);
      expect(await json(res)).toEqual(
        failure({
          code: 1004,
          message: "DNS Validation Error",
          error_chain: [{ code: 9021, message: "TTL must be between 60 and 86400 seconds, or 1 for Automatic." }],
        }),
      );
    }
    for (const ttl of [1, 60, 86_400]) {
      expect((await create(c, { type: "A", name: `ok${ttl}`, content: "198.51.100.1", ttl })).status).toBe(200);
    }
    const txt = await json(await create(c, { type: "TXT", name: "t", content: "x", proxied: true }));
    expect(txt.errors).toEqual([
      {
        code: 1004,
        message: "DNS Validation Error",
        error_chain: [{ code: 9004, message: "This record type cannot be proxied." }],
      },
    ]);
    const proxied = await json(
      await create(c, { type: "CNAME", name: "www", content: "example.co.uk", proxied: true, ttl: 300 }),
    );
    expect(proxied.result).toMatchObject({ proxied: true, ttl: 1, settings: { flatten_cname: false } });
  });

  it("answers malformed bodies, names and types", async () => {
    const c = await start();
    const cases: Array<[unknown, number]> = [
      ["{not json", 6007],
      [[1, 2], 9207],
      [{ type: "A", name: 123, content: "198.51.100.1" }, 9207],
      [{ type: "A", name: "x", content: "198.51.100.1", proxied: "yes" }, 9207],
      [{ name: "x", content: "198.51.100.1" }, 9020],
      [{ type: "MX", name: "x", content: "mail.example.net" }, 9020],
      [{ type: "A", name: "bad name", content: "198.51.100.1" }, 9000],
      [{ type: "A", content: "198.51.100.1" }, 9000],
    ];
    for (const [body, code] of cases) {
      const res = await create(c, body);
      expect(res.status).toBe(400);
      expect((await json(res)).errors[0].code).toBe(code);
    }
    const txt = await json(await create(c, { type: "TXT", name: "x", content: "" }));
    expect(txt.errors).toEqual([{ code: 1004, message: "DNS Validation Error" }]);
    const cname = await json(await create(c, { type: "CNAME", name: "x", content: "not a host" }));
    expect(cname.errors[0].error_chain).toEqual([{ code: 9007, message: "Content for CNAME record is invalid." }]);
    expect(c.records()).toEqual([]);
    expect(c.writes()).toEqual([]);
  });

  it("refuses writes to a zone the token may only read with 403 code 10000", async () => {
    const c = await start({
      zones: [{ name: "example.co.uk" }, { name: "readonly.example", editable: false }],
      records: [{ zone: "readonly.example", name: "mc", content: "203.0.113.10" }],
    });
    const post = await create(c, { type: "A", name: "mc2", content: "203.0.113.11" }, "readonly.example");
    expect(post.status).toBe(403);
    expect(await json(post)).toEqual(
      failure({
        code: 10000,
        message: "Authentication error",
        documentation_url: "https://developers.cloudflare.com/api/resources/dns/subresources/records/methods/create/",
      }),
    );
    const id = c.records("readonly.example")[0]?.id;
    for (const method of ["PUT", "PATCH", "DELETE"]) {
      const res = await api(c, `${recordsPath(c, "readonly.example")}/${id}`, {
        method,
        ...(method === "DELETE" ? {} : { body: { type: "A", name: "mc", content: "203.0.113.12" } }),
      });
      expect(res.status).toBe(403);
    }
    const list = await json(await api(c, recordsPath(c, "readonly.example")));
    expect(list.result).toHaveLength(1);
    const zone = await json(await api(c, "/zones?name=readonly.example"));
    expect(zone.result[0].permissions).toEqual(["#dns_records:read", "#zone:read"]);
    expect((await create(c, { type: "A", name: "mc", content: "203.0.113.11" })).status).toBe(200);
  });

  it("deletes a record; an unknown record is 404 code 81044", async () => {
    const c = await start({
      zones: [{ name: "example.co.uk" }, { name: "other.example" }],
      records: [
        { zone: "example.co.uk", name: "mc", content: "203.0.113.10" },
        { zone: "other.example", name: "mc", content: "203.0.113.10" },
      ],
    });
    const id = c.records("example.co.uk")[0]?.id;
    const res = await api(c, `${recordsPath(c)}/${id}`, { method: "DELETE" });
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ success: true, errors: [], messages: [], result: { id } });
    const again = await api(c, `${recordsPath(c)}/${id}`, { method: "DELETE" });
    expect(again.status).toBe(404);
    expect(await json(again)).toEqual(failure({ code: 81044, message: "Record does not exist." }));
    // A record of another zone is not found through this zone.
    const foreign = c.records("other.example")[0]?.id;
    expect((await api(c, `${recordsPath(c)}/${foreign}`)).status).toBe(404);
    expect((await json(await api(c, `${recordsPath(c)}/12345`))).errors[0].code).toBe(7003);
    expect(c.records()).toHaveLength(1);
  });

  it("answers 405 to a method the route does not take", async () => {
    const c = await start();
    const res = await api(c, "/zones", { method: "DELETE" });
    expect(res.status).toBe(405);
    expect(await json(res)).toEqual(
      failure({ code: 10000, message: "DELETE method not allowed for the api_token authentication scheme" }),
    );
    expect((await json(await api(c, "/accounts"))).errors[1]).toEqual({ code: 7000, message: "No route for that URI" });
  });
});

describe("rate limit", () => {
  it("answers 429 code 971 with Retry-After once over, for the whole window", async () => {
    // The window runs on a clock the test moves: which calls are still in it does not depend on the machine's load.
    let now = Date.now();
    const c = await start({ rateLimit: { limit: 3, windowMs: 500 }, now: () => now });
    const first = await api(c, "/zones");
    expect(first.headers.get("ratelimit")).toBe('"default";r=2;t=1');
    expect(first.headers.get("ratelimit-policy")).toBe('"default";q=3;w=1');
    await api(c, "/zones");
    await api(c, "/user/tokens/verify");
    const limited = await api(c, "/zones");
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("1");
    expect(limited.headers.get("ratelimit")).toBe('"default";r=0;t=1');
    expect(await json(limited)).toEqual(
      failure({ code: 971, message: "Please wait and consider throttling your request speed" }),
    );
    now += 150;
    const still = await api(c, "/user/tokens/verify");
    expect(still.status).toBe(429);
    expect(still.headers.get("retry-after")).toBe("1");
    now += 349;
    expect((await api(c, "/zones")).status).toBe(429);
    now += 1;
    const after = await api(c, "/zones");
    expect(after.status).toBe(200);
    expect(after.headers.get("ratelimit")).toBe('"default";r=2;t=1');
  });

  it("defaults to 1200 per five minutes, and does not count refused tokens", async () => {
    const c = await start();
    expect((await api(c, "/zones")).headers.get("ratelimit-policy")).toBe('"default";q=1200;w=300');
    const one = await startCloudflareStandIn({ rateLimit: { limit: 1, windowMs: 60_000 } });
    try {
      await api(one, "/zones", { token: WRONG_TOKEN });
      expect((await api(one, "/zones")).status).toBe(200);
      expect((await api(one, "/zones")).status).toBe(429);
    } finally {
      await one.close();
    }
  });
});

describe("faults", () => {
  it.each([
    ["verify", 500, { code: 500, message: "Internal Server Error" }],
    ["verify", 401, { code: 1000, message: "Invalid API Token" }],
    [
      "zones",
      403,
      {
        code: 10000,
        message: "Authentication error",
        documentation_url: "https://developers.cloudflare.com/api/resources/zones/methods/list/",
      },
    ],
    ["dns_records", 404, { code: 81044, message: "Record does not exist." }],
    ["dns_write", 429, { code: 971, message: "Please wait and consider throttling your request speed" }],
    ["dns_write", 503, { code: 503, message: "Service Unavailable" }],
  ] as const)("a %s status fault %i sends Cloudflare's envelope", async (route, status, error) => {
    const c = await start();
    c.inject({ kind: "status", status, route });
    const paths = {
      verify: ["GET", "/user/tokens/verify"],
      zones: ["GET", "/zones?name=example.co.uk"],
      dns_records: ["GET", recordsPath(c)],
      dns_write: ["POST", recordsPath(c)],
    } as const;
    const [method, path] = paths[route];
    const body = method === "POST" ? { type: "A", name: "mc", content: "198.51.100.1" } : undefined;
    const res = await api(c, path, { method, body });
    expect(res.status).toBe(status);
    expect(await json(res)).toEqual(failure(error));
    expect(c.requests[0]).toMatchObject({ route, status, fault: "status" });
    expect(c.records()).toEqual([]);
    expect((await api(c, path, { method, body })).status).toBe(200);
  });

  it("sends a given body and headers, only on its route, `times` times, before authentication", async () => {
    const c = await start();
    c.inject({
      kind: "status",
      status: 502,
      body: "<html>Bad gateway</html>",
      headers: { "CF-Ray": "x" },
      times: 2,
      route: "zones",
    });
    expect((await api(c, "/user/tokens/verify")).status).toBe(200);
    const res = await api(c, "/zones", { token: null });
    expect(res.status).toBe(502);
    expect(res.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(res.headers.get("cf-ray")).toBe("x");
    expect(await res.text()).toBe("<html>Bad gateway</html>");
    expect((await api(c, "/zones")).status).toBe(502);
    expect((await api(c, "/zones")).status).toBe(200);
  });

  it("answers a rate-limit fault with 429 and Retry-After", async () => {
    const c = await start();
    c.inject({ kind: "rate-limit", retryAfterSeconds: 7, route: "dns_write" });
    c.inject({ kind: "rate-limit", retryAfterSeconds: 2.2, viaHeaderOnly: true });
    const limited = await create(c, { type: "A", name: "mc", content: "198.51.100.1" });
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("7");
    expect(limited.headers.get("ratelimit")).toBe('"default";r=0;t=7');
    expect((await json(limited)).errors[0].code).toBe(971);
    const bare = await api(c, "/zones");
    expect(bare.status).toBe(429);
    expect(bare.headers.get("retry-after")).toBe("3");
    expect(bare.headers.get("ratelimit")).toBeNull();
    expect(c.records()).toEqual([]);
  });

  it("drops the connection so fetch fails, and records the request with status 0", async () => {
    const c = await start();
    c.inject({ kind: "drop", route: "dns_write" });
    await expect(create(c, { type: "A", name: "mc", content: "198.51.100.1" })).rejects.toThrow();
    expect(c.requests[0]).toMatchObject({ method: "POST", route: "dns_write", status: 0, fault: "drop" });
    expect(c.records()).toEqual([]);
  });

  it("delays the answer, then does the work", async () => {
    const c = await start();
    c.inject({ kind: "delay", ms: 120, route: "dns_write" });
    const started = Date.now();
    const res = await create(c, { type: "A", name: "mc", content: "198.51.100.1" });
    expect(res.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(110);
    expect(c.records()).toHaveLength(1);
    expect(c.requests[0]).toMatchObject({ status: 200, fault: "delay" });
  });
});

describe("logs", () => {
  it("logs accepted writes in order, and every request", async () => {
    const c = await start();
    const created = (await json(await create(c, { type: "A", name: "mc", content: "198.51.100.1" }))).result;
    await create(c, { type: "A", name: "mc", content: "not-an-ip" });
    const path = `${recordsPath(c)}/${created.id}`;
    await api(c, path, { method: "PUT", body: { type: "A", name: "mc", content: "198.51.100.2", proxied: true } });
    await api(c, path, { method: "PATCH", body: { content: "198.51.100.3" } });
    await api(c, path, { method: "DELETE" });
    expect(c.writes()).toEqual([
      { method: "POST", name: "mc.example.co.uk", content: "198.51.100.1", proxied: false },
      { method: "PUT", name: "mc.example.co.uk", content: "198.51.100.2", proxied: true },
      { method: "PATCH", name: "mc.example.co.uk", content: "198.51.100.3", proxied: true },
      { method: "DELETE", name: "mc.example.co.uk", content: "198.51.100.3" },
    ]);
    expect(c.requests.map((r) => `${r.method} ${r.status} ${r.route}`)).toEqual([
      "POST 200 dns_write",
      "POST 400 dns_write",
      "PUT 200 dns_write",
      "PATCH 200 dns_write",
      "DELETE 200 dns_write",
    ]);
    expect(c.requests[1]).toMatchObject({
      at: expect.any(Number),
      path: recordsPath(c).replace(/^/, "/client/v4"),
      body: { type: "A", name: "mc", content: "not-an-ip" },
    });
    await api(c, `${recordsPath(c)}?type=A&name=mc.example.co.uk`);
    expect(c.requests.at(-1)).toMatchObject({
      method: "GET",
      path: `/client/v4${recordsPath(c)}?type=A&name=mc.example.co.uk`,
      status: 200,
      route: "dns_records",
    });
    expect(c.requests.at(-1)).not.toHaveProperty("body");
  });

  it("reset forgets requests, writes and faults but keeps the records", async () => {
    const c = await start({ rateLimit: { limit: 2, windowMs: 60_000 } });
    await create(c, { type: "A", name: "mc", content: "198.51.100.1" });
    await api(c, "/zones");
    c.inject({ kind: "status", status: 500 });
    c.reset();
    expect(c.requests).toEqual([]);
    expect(c.writes()).toEqual([]);
    expect((await api(c, "/zones")).status).toBe(200);
    expect(c.records()).toHaveLength(1);
  });
});

describe("options", () => {
  it("refuses seed records that do not fit", async () => {
    await expect(
      startCloudflareStandIn({ records: [{ zone: "nope.example", name: "mc", content: "203.0.113.1" }] }),
    ).rejects.toThrow(/no zone "nope.example"/);
    await expect(
      startCloudflareStandIn({ records: [{ zone: "example.co.uk", name: "mc", content: "x" }] }),
    ).rejects.toThrow(/9005/);
    const c = await start();
    expect(() => c.records("nope.example")).toThrow(RangeError);
  });
});

import { afterEach, describe, expect, it } from "vitest";
import type { Action, DigitalOceanStandIn, DigitalOceanStandInOptions } from "../src/digitalocean.ts";
import { startDigitalOceanStandIn } from "../src/digitalocean.ts";

let stand: DigitalOceanStandIn | undefined;

afterEach(async () => {
  await stand?.close();
  stand = undefined;
});

const TIMINGS = { createMs: 60, shutdownMs: 40, powerOffMs: 30, powerOnMs: 40, snapshotMs: 60 };

async function start(options?: DigitalOceanStandInOptions): Promise<DigitalOceanStandIn> {
  stand = await startDigitalOceanStandIn({ timings: TIMINGS, ...options });
  return stand;
}

function api(
  d: DigitalOceanStandIn,
  path: string,
  init: { method?: string; body?: unknown; token?: string | null } = {},
): Promise<Response> {
  const headers: Record<string, string> = { Accept: "application/json" };
  const token = init.token === undefined ? d.token : init.token;
  if (token !== null) headers.Authorization = `Bearer ${token}`;
  if (init.body !== undefined) headers["Content-Type"] = "application/json";
  return fetch(`${d.url}/v2${path}`, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers,
    body: init.body === undefined ? undefined : typeof init.body === "string" ? init.body : JSON.stringify(init.body),
  });
}

// biome-ignore lint/suspicious/noExplicitAny: the answer's JSON as the vendor documents it; a wrong guess at its shape fails the assertion that reads it
const json = (res: Response): Promise<any> => res.json();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const act = (d: DigitalOceanStandIn, dropletId: number, body: Record<string, unknown>) =>
  api(d, `/droplets/${dropletId}/actions`, { body });
const firstId = (d: DigitalOceanStandIn): number => d.droplets()[0]?.id ?? -1;

/** Polls `probe` every 10 ms until it returns a value; fails after `timeoutMs`. */
async function until<T>(probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(10);
  }
}

/** Polls GET /v2/actions/{id} until the action leaves "in-progress". */
async function settled(d: DigitalOceanStandIn, actionId: number): Promise<Action> {
  return until(async () => {
    const { action } = await json(await api(d, `/actions/${actionId}`));
    return action.status === "in-progress" ? undefined : action;
  });
}

const REQUEST_ID = /^[0-9a-f-]{36}$/;

describe("authentication", () => {
  it("generates a token of DigitalOcean's shape and listens on loopback", async () => {
    const d = await start();
    expect(d.token).toMatch(/^dop_v1_[0-9a-f]{64}$/);
    expect(d.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it.each([
    ["no Authorization header", null],
    ["a wrong token", "dop_v1_wrong"],
  ])("answers 401 unauthorized to %s", async (_name, token) => {
    const d = await start();
    const res = await api(d, "/droplets", { token });
    expect(res.status).toBe(401);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(res.headers.get("ratelimit-limit")).toBe("5000");
    const body = await json(res);
    expect(body).toEqual({ id: "unauthorized", message: "Unable to authenticate you", request_id: body.request_id });
    expect(body.request_id).toMatch(REQUEST_ID);
  });

  it("answers 401 to everything once the token is revoked", async () => {
    const d = await start({ token: "dop_v1_fixed" });
    expect((await api(d, "/account")).status).toBe(200);
    d.revokeToken();
    for (const path of ["/account", "/droplets", `/droplets/${firstId(d)}`]) {
      const res = await api(d, path);
      expect(res.status).toBe(401);
      expect((await json(res)).id).toBe("unauthorized");
    }
    expect((await act(d, firstId(d), { type: "shutdown" })).status).toBe(401);
    expect(d.actions()).toEqual([]);
  });
});

describe("rate limit", () => {
  it("puts RateLimit-Limit, -Remaining and -Reset (epoch seconds) on every answer", async () => {
    const now = Date.now();
    const d = await start({ now: () => now });
    const first = await api(d, "/account");
    const second = await api(d, "/droplets/1");
    const missing = await api(d, "/no/such/route");
    expect([first.status, second.status, missing.status]).toEqual([200, 404, 404]);
    expect([first, second, missing].map((r) => r.headers.get("ratelimit-remaining"))).toEqual(["4999", "4998", "4997"]);
    for (const res of [first, second, missing]) {
      expect(res.headers.get("ratelimit-limit")).toBe("5000");
      // The first request leaves the hour's window an hour after it was made, whichever request is asking.
      expect(res.headers.get("ratelimit-reset")).toBe(String(Math.ceil((now + 3_600_000) / 1000)));
    }
  });

  it("answers 429 too_many_requests over the limit, and the window slides", async () => {
    // The window runs on a clock the test moves: which requests are still in it does not depend on the machine's load.
    let now = Date.now();
    const d = await start({ rateLimit: { limit: 3, windowMs: 200 }, now: () => now });
    for (let i = 0; i < 3; i++) expect((await api(d, "/account")).status).toBe(200);
    const res = await api(d, "/account");
    expect(res.status).toBe(429);
    expect(res.headers.get("ratelimit-limit")).toBe("3");
    expect(res.headers.get("ratelimit-remaining")).toBe("0");
    expect(res.headers.get("ratelimit-reset")).toBe(String(Math.ceil((now + 200) / 1000)));
    expect(res.headers.get("retry-after")).toBe("1");
    const body = await json(res);
    expect(body).toMatchObject({ id: "too_many_requests", message: "API Rate limit exceeded." });
    expect(body.request_id).toMatch(REQUEST_ID);
    now += 199;
    expect((await api(d, "/account")).status).toBe(429);
    now += 1;
    expect((await api(d, "/account")).status).toBe(200);
  });

  it("counts per token, and reset() clears the window", async () => {
    const d = await start({ rateLimit: { limit: 1, windowMs: 60_000 } });
    expect((await api(d, "/account")).status).toBe(200);
    expect((await api(d, "/account")).status).toBe(429);
    expect((await api(d, "/account", { token: "dop_v1_other" })).status).toBe(401);
    d.reset();
    expect((await api(d, "/account")).status).toBe(200);
  });
});

describe("account and keys", () => {
  it("answers the account", async () => {
    const d = await start();
    const res = await api(d, "/account");
    expect(res.status).toBe(200);
    const { account } = await json(res);
    expect(account).toMatchObject({ droplet_limit: 25, email_verified: true, status: "active", status_message: "" });
    expect(account.email).toContain("@");
    expect(account.uuid).toMatch(REQUEST_ID);
  });

  it("lists the SSH keys with ids, MD5 fingerprints and public keys", async () => {
    const d = await start({ sshKeys: [{ name: "one" }, { name: "two" }, { name: "three" }] });
    const body = await json(await api(d, "/account/keys"));
    expect(body.meta).toEqual({ total: 3 });
    expect(body.links).toEqual({});
    expect(body.ssh_keys.map((k: { name: string }) => k.name)).toEqual(["one", "two", "three"]);
    for (const key of body.ssh_keys) {
      expect(Number.isInteger(key.id)).toBe(true);
      expect(key.fingerprint).toMatch(/^([0-9a-f]{2}:){15}[0-9a-f]{2}$/);
      expect(key.public_key).toMatch(new RegExp(`^ssh-ed25519 AAAA\\S+ ${key.name}$`));
    }
  });
});

describe("droplets", () => {
  it("starts with one active droplet mc of DigitalOcean's shape", async () => {
    const d = await start();
    const body = await json(await api(d, "/droplets"));
    expect(body.meta).toEqual({ total: 1 });
    expect(body.links).toEqual({});
    const [droplet] = body.droplets;
    expect(droplet).toMatchObject({
      name: "mc",
      memory: 4096,
      vcpus: 2,
      disk: 80,
      locked: false,
      status: "active",
      size_slug: "s-2vcpu-4gb",
      size: { slug: "s-2vcpu-4gb", memory: 4096, vcpus: 2, disk: 80, price_monthly: 24, price_hourly: 0.03571 },
      region: { slug: "fra1", name: "Frankfurt 1", available: true },
      image: { name: "22.04 (LTS) x64", distribution: "Ubuntu", slug: "ubuntu-22-04-x64", type: "base" },
      tags: ["mcops"],
      snapshot_ids: [],
      volume_ids: [],
      networks: { v6: [] },
    });
    expect(Number.isInteger(droplet.id)).toBe(true);
    expect(droplet.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(droplet.features).toEqual(expect.any(Array));
    const publicV4 = droplet.networks.v4.find((n: { type: string }) => n.type === "public");
    expect(publicV4).toEqual({
      ip_address: expect.stringMatching(/^203\.0\.113\.\d+$/),
      netmask: "255.255.255.0",
      gateway: "203.0.113.1",
      type: "public",
    });
    expect(d.droplets()).toEqual(body.droplets);
  });

  it("gets a droplet by id, and answers 404 not_found for unknown ids and routes", async () => {
    const d = await start();
    const res = await api(d, `/droplets/${firstId(d)}`);
    expect(res.status).toBe(200);
    expect((await json(res)).droplet.name).toBe("mc");
    for (const path of ["/droplets/12345", "/droplets/abc", "/nope", "/droplets/1/nope"]) {
      const missing = await api(d, path);
      expect(missing.status).toBe(404);
      const body = await json(missing);
      expect(body).toEqual({
        id: "not_found",
        message: "The resource you were accessing could not be found.",
        request_id: expect.stringMatching(REQUEST_ID),
      });
    }
    expect((await api(d, `/droplets/${firstId(d)}`, { method: "PATCH", body: {} })).status).toBe(404);
  });

  it("filters by tag_name and name, and paginates with links.pages", async () => {
    const d = await start({
      droplets: [
        { name: "mc", tags: ["mcops"] },
        { name: "web", tags: ["www"], size: "s-1vcpu-1gb", region: "ams3" },
        { name: "mc-2", tags: ["mcops"], status: "off" },
      ],
    });
    const tagged = await json(await api(d, "/droplets?tag_name=mcops"));
    expect(tagged.droplets.map((x: { name: string }) => x.name)).toEqual(["mc", "mc-2"]);
    expect(tagged.droplets[1].status).toBe("off");
    expect((await json(await api(d, "/droplets?name=web"))).droplets[0]).toMatchObject({
      size_slug: "s-1vcpu-1gb",
      region: { slug: "ams3" },
    });
    const page1 = await json(await api(d, "/droplets?per_page=2"));
    expect(page1.droplets).toHaveLength(2);
    expect(page1.meta).toEqual({ total: 3 });
    expect(page1.links.pages).toEqual({
      next: `${d.url}/v2/droplets?per_page=2&page=2`,
      last: `${d.url}/v2/droplets?per_page=2&page=2`,
    });
    const page2 = await json(await fetch(page1.links.pages.next, { headers: { Authorization: `Bearer ${d.token}` } }));
    expect(page2.droplets.map((x: { name: string }) => x.name)).toEqual(["mc-2"]);
    expect(Object.keys(page2.links.pages)).toEqual(["first", "prev"]);
  });

  it("refuses unknown sizes and regions in its options", async () => {
    await expect(startDigitalOceanStandIn({ droplets: [{ name: "x", size: "huge" }] })).rejects.toThrow(RangeError);
    await expect(startDigitalOceanStandIn({ droplets: [{ name: "x", region: "mars1" }] })).rejects.toThrow(RangeError);
  });
});

describe("the full cycle", () => {
  it("shutdown → snapshot → listed → destroy → create from the snapshot → active with an IPv4", async () => {
    const d = await start();
    const dropletId = firstId(d);
    const oldIp = d.droplets()[0]?.networks.v4[0]?.ip_address;

    // Shut down.
    const shut = await act(d, dropletId, { type: "shutdown" });
    expect(shut.status).toBe(201);
    const { action: shutdown } = await json(shut);
    expect(shutdown).toMatchObject({
      status: "in-progress",
      type: "shutdown",
      completed_at: null,
      resource_id: dropletId,
      resource_type: "droplet",
      region: { slug: "fra1" },
      region_slug: "fra1",
    });
    expect(shutdown.started_at).toMatch(/Z$/);
    expect((await settled(d, shutdown.id)).status).toBe("completed");
    expect((await json(await api(d, `/droplets/${dropletId}`))).droplet.status).toBe("off");

    // Snapshot.
    const { action: snap } = await json(await act(d, dropletId, { type: "snapshot", name: "mc-backup" }));
    expect(snap).toMatchObject({ type: "snapshot", status: "in-progress" });
    const viaDroplet = await json(await api(d, `/droplets/${dropletId}/actions/${snap.id}`));
    expect(viaDroplet.action.id).toBe(snap.id);
    const done = await settled(d, snap.id);
    expect(done.status).toBe("completed");
    expect(done.completed_at).toMatch(/Z$/);

    // Listed.
    const listed = await json(await api(d, "/snapshots?resource_type=droplet"));
    expect(listed.meta).toEqual({ total: 1 });
    const [snapshot] = listed.snapshots;
    expect(snapshot).toEqual({
      id: expect.stringMatching(/^\d+$/),
      name: "mc-backup",
      regions: ["fra1"],
      created_at: expect.stringMatching(/Z$/),
      resource_id: String(dropletId),
      resource_type: "droplet",
      min_disk_size: 80,
      size_gigabytes: 80,
      tags: [],
    });
    expect((await json(await api(d, `/snapshots/${snapshot.id}`))).snapshot).toEqual(snapshot);
    expect((await json(await api(d, `/droplets/${dropletId}`))).droplet.snapshot_ids).toEqual([Number(snapshot.id)]);

    // Destroy.
    const destroyed = await api(d, `/droplets/${dropletId}`, { method: "DELETE" });
    expect(destroyed.status).toBe(204);
    expect(await destroyed.text()).toBe("");
    expect((await api(d, `/droplets/${dropletId}`)).status).toBe(404);
    expect((await json(await api(d, "/droplets"))).droplets).toEqual([]);
    expect((await json(await api(d, "/snapshots"))).snapshots).toHaveLength(1);

    // Create from the snapshot.
    const keys = (await json(await api(d, "/account/keys"))).ssh_keys;
    // The creation stays "in-progress" until the test releases it: the pending event below is not a race.
    d.inject({ kind: "action-hangs", actionType: "create" });
    const created = await api(d, "/droplets", {
      body: {
        name: "mc",
        region: "fra1",
        size: "s-2vcpu-4gb",
        image: Number(snapshot.id),
        ssh_keys: [keys[0].id, keys[1].fingerprint],
        tags: ["mcops"],
        monitoring: true,
      },
    });
    expect(created.status).toBe(202);
    const body = await json(created);
    expect(body.droplet).toMatchObject({
      name: "mc",
      status: "new",
      networks: { v4: [], v6: [] },
      image: { id: Number(snapshot.id), name: "mc-backup", type: "snapshot", distribution: "Ubuntu" },
      tags: ["mcops"],
    });
    expect(body.droplet.features).toContain("monitoring");
    const [link] = body.links.actions;
    expect(link).toEqual({ id: expect.any(Number), rel: "create", href: `${d.url}/v2/actions/${link.id}` });

    // While it is being created, it has a pending event.
    const early = await act(d, body.droplet.id, { type: "power_off" });
    expect(early.status).toBe(422);
    expect((await json(early)).message).toBe("Droplet already has a pending event.");

    // Active, with a public IPv4.
    const createAction = await json(await fetch(link.href, { headers: { Authorization: `Bearer ${d.token}` } }));
    expect(createAction.action).toMatchObject({ type: "create", resource_id: body.droplet.id, status: "in-progress" });
    d.settleAction(link.id, "completed");
    const active = await until(async () => {
      const { droplet } = await json(await api(d, `/droplets/${body.droplet.id}`));
      return droplet.status === "active" ? droplet : undefined;
    });
    const ipv4 = active.networks.v4.find((n: { type: string }) => n.type === "public");
    expect(ipv4.ip_address).toMatch(/^203\.0\.113\.\d+$/);
    expect(ipv4.ip_address).not.toBe(oldIp);
    expect((await settled(d, link.id)).status).toBe("completed");

    expect(d.actions().map((a) => [a.type, a.status])).toEqual([
      ["shutdown", "completed"],
      ["snapshot", "completed"],
      ["destroy", "completed"],
      ["create", "completed"],
    ]);
  });

  it("powers off and on", async () => {
    const d = await start();
    const id = firstId(d);
    await settled(d, (await json(await act(d, id, { type: "power_off" }))).action.id);
    expect(d.droplets()[0]?.status).toBe("off");
    expect(d.droplets()[0]?.networks.v4).toHaveLength(2);
    await settled(d, (await json(await act(d, id, { type: "power_on" }))).action.id);
    expect(d.droplets()[0]?.status).toBe("active");
    const listed = await json(await api(d, `/droplets/${id}/actions`));
    expect(listed.actions.map((a: { type: string }) => a.type)).toEqual(["power_on", "power_off"]);
  });

  it("names a snapshot after the droplet when the name is left out", async () => {
    const d = await start({ droplets: [{ name: "mc", sizeGigabytes: 4.2 }] });
    await settled(d, (await json(await act(d, firstId(d), { type: "snapshot" }))).action.id);
    expect(d.droplets()[0]?.status).toBe("active");
    expect(d.snapshots()[0]).toMatchObject({ name: expect.stringMatching(/^mc-\d{10}$/), size_gigabytes: 4.2 });
    expect(d.snapshots()[0]?.min_disk_size).toBe(80);
  });
});

describe("422 unprocessable_entity", () => {
  it("refuses a second action while one is pending, and a destroy too", async () => {
    // A slow shutdown, so that it is still pending however busy the machine is; it ends after the two refusals.
    const d = await start({ timings: { ...TIMINGS, shutdownMs: 5000 } });
    const id = firstId(d);
    d.inject({ kind: "action-hangs", actionType: "shutdown" });
    expect((await act(d, id, { type: "shutdown" })).status).toBe(201);
    for (const res of [
      await act(d, id, { type: "power_off" }),
      await api(d, `/droplets/${id}`, { method: "DELETE" }),
    ]) {
      expect(res.status).toBe(422);
      expect(await json(res)).toEqual({
        id: "unprocessable_entity",
        message: "Droplet already has a pending event.",
        request_id: expect.stringMatching(REQUEST_ID),
      });
    }
    // Once nothing is pending any more, actions are taken again.
    await d.close();
    const other = await start();
    const otherId = firstId(other);
    const done = (await json(await act(other, otherId, { type: "power_off" }))).action.id;
    await settled(other, done);
    expect((await act(other, otherId, { type: "power_on" })).status).toBe(201);
  });

  it("refuses powering on an active droplet and powering off an off one", async () => {
    const d = await start({ droplets: [{ name: "on" }, { name: "off", status: "off" }] });
    const [on, off] = d.droplets();
    const onAgain = await act(d, on?.id ?? 0, { type: "power_on" });
    expect(onAgain.status).toBe(422);
    expect((await json(onAgain)).message).toBe("Droplet is already powered on.");
    for (const type of ["power_off", "shutdown"]) {
      const res = await act(d, off?.id ?? 0, { type });
      expect(res.status).toBe(422);
      expect((await json(res)).message).toBe("Droplet is already powered off.");
    }
    const bad = await act(d, on?.id ?? 0, { type: "explode" });
    expect(bad.status).toBe(422);
    expect((await json(bad)).id).toBe("unprocessable_entity");
    expect((await act(d, 1, { type: "power_on" })).status).toBe(404);
    expect(d.actions()).toEqual([]);
  });

  it.each([
    ["no name", { name: undefined }, "Only valid hostname characters are allowed. (a-z, A-Z, 0-9, . and -)"],
    ["a bad name", { name: "my server" }, "Only valid hostname characters are allowed. (a-z, A-Z, 0-9, . and -)"],
    ["no region", { region: undefined }, "You specified an invalid region for Droplet creation."],
    ["an unknown region", { region: "mars1" }, "You specified an invalid region for Droplet creation."],
    ["no size", { size: undefined }, "You specified an invalid size for Droplet creation."],
    ["an unknown size", { size: "s-64vcpu-1tb" }, "You specified an invalid size for Droplet creation."],
    ["no image", { image: undefined }, "You specified an invalid image for Droplet creation."],
    ["an unknown slug", { image: "windows-11" }, "You specified an invalid image for Droplet creation."],
    ["a snapshot id that does not exist", { image: 99 }, "You specified an invalid image for Droplet creation."],
    ["an unknown ssh key", { ssh_keys: [1] }, "You specified an invalid ssh key for Droplet creation."],
  ])("refuses a create with %s", async (_name, change, message) => {
    const d = await start();
    const body = { name: "mc2", region: "fra1", size: "s-1vcpu-1gb", image: "ubuntu-22-04-x64", ...change };
    const res = await api(d, "/droplets", { body });
    expect(res.status).toBe(422);
    expect(await json(res)).toEqual({
      id: "unprocessable_entity",
      message,
      request_id: expect.stringMatching(REQUEST_ID),
    });
    expect(d.droplets()).toHaveLength(1);
  });

  it("refuses a size whose disk is smaller than the snapshot's, and one outside the snapshot's region", async () => {
    const d = await start({ snapshots: [{ name: "big", sizeGigabytes: 70, region: "fra1" }] });
    const image = Number(d.snapshots()[0]?.id);
    expect(d.snapshots()[0]).toMatchObject({ min_disk_size: 80, size_gigabytes: 70 });
    const small = await api(d, "/droplets", { body: { name: "a", region: "fra1", size: "s-1vcpu-1gb", image } });
    expect(small.status).toBe(422);
    expect((await json(small)).message).toBe(
      "Cannot create a droplet with a smaller disk (25GB) than the image (80GB)",
    );
    const elsewhere = await api(d, "/droplets", { body: { name: "a", region: "nyc3", size: "s-2vcpu-4gb", image } });
    expect(elsewhere.status).toBe(422);
    const ok = await api(d, "/droplets", { body: { name: "a", region: "fra1", size: "s-2vcpu-4gb", image } });
    expect(ok.status).toBe(202);
  });

  it("answers 400 bad_request to a body that is not JSON", async () => {
    const d = await start();
    const res = await api(d, "/droplets", { body: "{not json" });
    expect(res.status).toBe(400);
    expect((await json(res)).id).toBe("bad_request");
  });
});

describe("snapshots", () => {
  it("lists, gets and deletes snapshots", async () => {
    const d = await start({
      snapshots: [
        { name: "old", sizeGigabytes: 3.5, createdAt: "2025-01-02T03:04:05Z", resourceId: 123 },
        { name: "older", region: "ams3" },
      ],
    });
    const body = await json(await api(d, "/snapshots"));
    expect(body.meta).toEqual({ total: 2 });
    expect(body.snapshots[0]).toEqual({
      id: expect.stringMatching(/^\d+$/),
      name: "old",
      regions: ["fra1"],
      created_at: "2025-01-02T03:04:05Z",
      resource_id: "123",
      resource_type: "droplet",
      min_disk_size: 25,
      size_gigabytes: 3.5,
      tags: [],
    });
    expect(body.snapshots[1]).toMatchObject({ name: "older", regions: ["ams3"], min_disk_size: 80 });
    expect((await json(await api(d, "/snapshots?resource_type=volume"))).snapshots).toEqual([]);
    const id = body.snapshots[0].id;
    expect((await api(d, `/snapshots/${id}`, { method: "DELETE" })).status).toBe(204);
    expect((await api(d, `/snapshots/${id}`)).status).toBe(404);
    expect((await api(d, `/snapshots/${id}`, { method: "DELETE" })).status).toBe(404);
    expect(d.snapshots().map((s) => s.name)).toEqual(["older"]);
  });

  it("drops a deleted snapshot from its droplet's snapshot_ids", async () => {
    const d = await start();
    await settled(d, (await json(await act(d, firstId(d), { type: "snapshot", name: "s" }))).action.id);
    const id = d.snapshots()[0]?.id;
    expect(d.droplets()[0]?.snapshot_ids).toEqual([Number(id)]);
    expect((await api(d, `/snapshots/${id}`, { method: "DELETE" })).status).toBe(204);
    expect(d.droplets()[0]?.snapshot_ids).toEqual([]);
  });
});

describe("faults", () => {
  it("answers an injected status with DigitalOcean's error body, `times` times, for its route only", async () => {
    const d = await start();
    d.inject({ kind: "status", status: 500, times: 2, route: "GET /v2/droplets" });
    expect((await api(d, "/account")).status).toBe(200);
    for (let i = 0; i < 2; i++) {
      const res = await api(d, "/droplets");
      expect(res.status).toBe(500);
      expect(res.headers.get("ratelimit-remaining")).toEqual(expect.any(String));
      expect(await json(res)).toEqual({
        id: "server_error",
        message: "Unexpected server-side error",
        request_id: expect.stringMatching(REQUEST_ID),
      });
    }
    expect((await api(d, "/droplets")).status).toBe(200);
    expect(d.requests.map((r) => [r.route, r.status, r.fault])).toEqual([
      ["GET /v2/account", 200, undefined],
      ["GET /v2/droplets", 500, "status"],
      ["GET /v2/droplets", 500, "status"],
      ["GET /v2/droplets", 200, undefined],
    ]);
  });

  it("answers an injected status with a given body, on a parametrised route", async () => {
    const d = await start();
    d.inject({ kind: "status", status: 503, body: "upstream unavailable", route: "POST /v2/droplets/:id/actions" });
    const res = await act(d, firstId(d), { type: "shutdown" });
    expect(res.status).toBe(503);
    expect(await res.text()).toBe("upstream unavailable");
    expect(d.actions()).toEqual([]);
    d.inject({ kind: "status", status: 503 });
    expect(await json(await api(d, "/account"))).toMatchObject({ id: "service_unavailable" });
  });

  it("answers an injected rate limit with 429, the hour's rate headers and Retry-After (issue 31)", async () => {
    // RateLimit-Reset is when the hour's oldest request expires (description.yml "Rate Limit"), not the wait's end.
    const now = Date.now();
    const d = await start({ now: () => now });
    d.inject({ kind: "rate-limit", retryAfterSeconds: 30 });
    const res = await api(d, "/account");
    expect(res.status).toBe(429);
    expect(res.headers.get("ratelimit-limit")).toBe("5000");
    expect(res.headers.get("ratelimit-remaining")).toBe("4999");
    expect(res.headers.get("ratelimit-reset")).toBe(String(Math.ceil((now + 3_600_000) / 1000)));
    expect(res.headers.get("retry-after")).toBe("30");
    expect((await json(res)).id).toBe("too_many_requests");
    expect((await api(d, "/account")).status).toBe(200);
    // As too_many_requests.yml lists the 429's headers: the hour's RateLimit-* and no Retry-After.
    d.inject({ kind: "rate-limit", retryAfterSeconds: 30, withoutRetryAfter: true });
    const bare = await api(d, "/account");
    expect(bare.status).toBe(429);
    expect(bare.headers.get("retry-after")).toBeNull();
    expect(bare.headers.get("ratelimit-remaining")).toBe("4997");
  });

  it("refuses past the burst limit with the minute's Retry-After and the hour's RateLimit-Reset (issue 31)", async () => {
    let now = Date.now();
    const d = await start({ now: () => now, burstLimit: { limit: 2, windowMs: 60_000 } });
    expect((await api(d, "/account")).status).toBe(200);
    now += 20_000;
    expect((await api(d, "/account")).status).toBe(200);
    const res = await api(d, "/account");
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("40");
    expect(Number(res.headers.get("ratelimit-remaining"))).toBeGreaterThan(0);
    expect(Number(res.headers.get("ratelimit-reset"))).toBe(Math.ceil((now - 20_000 + 3_600_000) / 1000));
    now += 40_000;
    expect((await api(d, "/account")).status).toBe(200);
  });

  it("drops the connection so fetch fails, and records status 0", async () => {
    const d = await start();
    d.inject({ kind: "drop", route: "POST /v2/droplets/:id/actions" });
    await expect(act(d, firstId(d), { type: "shutdown" })).rejects.toThrow();
    expect(d.requests[0]).toMatchObject({ method: "POST", status: 0, fault: "drop", body: { type: "shutdown" } });
    expect(d.actions()).toEqual([]);
    expect((await act(d, firstId(d), { type: "shutdown" })).status).toBe(201);
  });

  it("delays the answer and then does the work", async () => {
    const d = await start();
    d.inject({ kind: "delay", ms: 150 });
    const began = performance.now();
    expect((await act(d, firstId(d), { type: "power_off" })).status).toBe(201);
    expect(performance.now() - began).toBeGreaterThanOrEqual(140);
    expect(d.actions()).toHaveLength(1);
  });

  it("action-errors: the next shutdown ends errored and the droplet stays active", async () => {
    const d = await start();
    d.inject({ kind: "action-errors", actionType: "shutdown" });
    const first = await settled(d, (await json(await act(d, firstId(d), { type: "shutdown" }))).action.id);
    expect(first).toMatchObject({ status: "errored", completed_at: expect.stringMatching(/Z$/) });
    expect(d.droplets()[0]?.status).toBe("active");
    const second = await settled(d, (await json(await act(d, firstId(d), { type: "shutdown" }))).action.id);
    expect(second.status).toBe("completed");
    expect(d.droplets()[0]?.status).toBe("off");
  });

  it("action-errors: an errored snapshot creates no snapshot", async () => {
    const d = await start();
    d.inject({ kind: "action-errors", actionType: "snapshot" });
    const action = await settled(d, (await json(await act(d, firstId(d), { type: "snapshot", name: "x" }))).action.id);
    expect(action.status).toBe("errored");
    expect((await json(await api(d, "/snapshots"))).snapshots).toEqual([]);
    expect(d.droplets()[0]?.snapshot_ids).toEqual([]);
  });

  it("action-errors: an errored create leaves the droplet new, without networks", async () => {
    const d = await start();
    d.inject({ kind: "action-errors", actionType: "create" });
    const body = { name: "b", region: "fra1", size: "s-1vcpu-1gb", image: "ubuntu-24-04-x64" };
    const created = await json(await api(d, "/droplets", { body }));
    expect((await settled(d, created.links.actions[0].id)).status).toBe("errored");
    const { droplet } = await json(await api(d, `/droplets/${created.droplet.id}`));
    expect(droplet).toMatchObject({ status: "new", networks: { v4: [], v6: [] } });
    expect((await api(d, `/droplets/${droplet.id}`, { method: "DELETE" })).status).toBe(204);
  });

  it("action-hangs: a hung shutdown stays in-progress, the droplet active, further actions refused", async () => {
    const d = await start();
    d.inject({ kind: "action-hangs", actionType: "shutdown" });
    const { action } = await json(await act(d, firstId(d), { type: "shutdown" }));
    await sleep(TIMINGS.shutdownMs * 3);
    expect((await json(await api(d, `/actions/${action.id}`))).action).toMatchObject({
      status: "in-progress",
      completed_at: null,
    });
    expect(d.droplets()[0]?.status).toBe("active");
    const refused = await act(d, firstId(d), { type: "power_off" });
    expect(refused.status).toBe(422);
    expect((await json(refused)).message).toBe("Droplet already has a pending event.");
  });

  it("settleAction ends a hung action: errored frees the droplet for the next action, completed takes effect", async () => {
    const d = await start();
    d.inject({ kind: "action-hangs", actionType: "shutdown", times: 2 });
    const first = (await json(await act(d, firstId(d), { type: "shutdown" }))).action;
    d.settleAction(first.id, "errored");
    expect((await json(await api(d, `/actions/${first.id}`))).action.status).toBe("errored");
    expect(d.droplets()[0]?.status).toBe("active");
    const second = (await json(await act(d, firstId(d), { type: "shutdown" }))).action;
    d.settleAction(second.id, "completed");
    expect(d.droplets()[0]?.status).toBe("off");
    expect(() => d.settleAction(second.id, "completed")).toThrow(/not a hanging action|in-progress/);
  });

  it("action-hangs: a hung power_on keeps the droplet off; other types are unaffected", async () => {
    const d = await start({
      droplets: [
        { name: "a", status: "off" },
        { name: "b", status: "off" },
      ],
    });
    d.inject({ kind: "action-hangs", actionType: "power_on" });
    const [a, b] = d.droplets();
    await act(d, a?.id ?? 0, { type: "power_on" });
    await settled(d, (await json(await act(d, b?.id ?? 0, { type: "snapshot" }))).action.id);
    await sleep(TIMINGS.powerOnMs * 2);
    expect(d.droplets().map((x) => x.status)).toEqual(["off", "off"]);
    expect(d.actions().map((x) => [x.type, x.status])).toEqual([
      ["power_on", "in-progress"],
      ["snapshot", "completed"],
    ]);
  });

  it("refuses faults for routes or action types it does not have", async () => {
    const d = await start();
    expect(() => d.inject({ kind: "drop", route: "GET /v2/nope" as never })).toThrow(RangeError);
    expect(() => d.inject({ kind: "action-errors", actionType: "reboot" as never })).toThrow(RangeError);
  });

  it("reset() forgets requests and pending faults but keeps the world", async () => {
    const d = await start();
    d.inject({ kind: "status", status: 500 });
    d.inject({ kind: "action-errors", actionType: "power_off" });
    await api(d, "/droplets/1");
    d.reset();
    expect(d.requests).toEqual([]);
    expect((await api(d, "/account")).status).toBe(200);
    const action = await settled(d, (await json(await act(d, firstId(d), { type: "power_off" }))).action.id);
    expect(action.status).toBe("completed");
    expect(d.droplets()[0]?.status).toBe("off");
    expect(d.requests[0]).toMatchObject({ method: "GET", path: "/v2/account", status: 200, route: "GET /v2/account" });
  });
});

describe("lifecycle", () => {
  it("close ends connections and pending actions", async () => {
    // A shutdown long enough that close always comes first, however busy the machine: what is tested is that close
    // cancels it, so nothing may change after close for longer than the shutdown would take.
    const shutdownMs = 1500;
    const d = await start({ timings: { ...TIMINGS, shutdownMs } });
    await act(d, firstId(d), { type: "shutdown" });
    await d.close();
    await expect(api(d, "/account")).rejects.toThrow();
    await sleep(shutdownMs * 2);
    expect(d.droplets()[0]?.status).toBe("active");
  });
});

describe("a lagging list and a lost answer (issue 30)", () => {
  const create = (d: DigitalOceanStandIn, name: string) =>
    api(d, "/droplets", {
      body: { name, region: "fra1", size: "s-1vcpu-1gb", image: "ubuntu-22-04-x64", tags: ["t"] },
    });
  const listedNames = async (d: DigitalOceanStandIn, query = "?tag_name=t") =>
    (await json(await api(d, `/droplets${query}`))).droplets.map((x: { name: string }) => x.name);

  it("misses a droplet just created from its first N list requests, while GET by id finds it at once", async () => {
    const d = await start({ droplets: [], listLag: { requests: 2 } });
    const { droplet } = await json(await create(d, "late"));
    expect((await api(d, `/droplets/${droplet.id}`)).status).toBe(200);
    expect(await listedNames(d)).toEqual([]);
    expect(await listedNames(d, "")).toEqual([]);
    expect(await listedNames(d)).toEqual(["late"]);
    expect(d.droplets().map((x) => x.name)).toEqual(["late"]);
  });

  it("misses it until the list catches up, when told to lag without end", async () => {
    const d = await start({ droplets: [] });
    await create(d, "listed");
    d.lagList({ requests: Number.POSITIVE_INFINITY });
    await create(d, "late");
    expect(await listedNames(d)).toEqual(["listed"]);
    d.catchUpList();
    expect(await listedNames(d)).toEqual(["listed", "late"]);
  });

  it("misses it for `ms` after the create", async () => {
    const d = await start({ droplets: [], listLag: { ms: 60_000 } });
    await create(d, "late");
    expect(await listedNames(d)).toEqual([]);
    expect(() => d.lagList({ ms: -1 })).toThrow(RangeError);
  });

  it("makes the droplet and answers the create 500 with a status-after-effect fault", async () => {
    const d = await start({ droplets: [] });
    d.inject({ kind: "status-after-effect", status: 500, route: "POST /v2/droplets" });
    const res = await create(d, "made");
    expect(res.status).toBe(500);
    const body = await json(res);
    expect(body).toEqual({ id: "server_error", message: "Unexpected server-side error", request_id: body.request_id });
    expect(d.droplets().map((x) => x.name)).toEqual(["made"]);
    expect(d.requests.at(-1)).toMatchObject({ status: 500, fault: "status-after-effect" });
    // Once only: the next create is answered as usual.
    expect((await create(d, "second")).status).toBe(202);
    expect(() => d.inject({ kind: "status-after-effect", status: 200 })).toThrow(RangeError);
  });
});

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { waitUntil } from "@mcops/testkit";
import { afterEach, describe, expect, it } from "vitest";
import { send } from "../../src/http/transport.ts";

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

/** A loopback server that records each request and answers it with `handle`. */
async function serve(handle: (req: Seen, res: ServerResponse) => void): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      const request = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body };
      seen.push(request);
      handle(request, res);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const signal = () => AbortSignal.timeout(60_000);

describe("send (node:http, as fetch would)", () => {
  it("sends JSON with its length and type, the user agent, and reads the answer's status, headers and text", async () => {
    const { url, seen } = await serve((_req, res) => {
      res.writeHead(201, { "X-RateLimit-Remaining": "4", "content-type": "application/json" });
      res.end('{"ok":true}');
    });
    const answer = await send(`${url}/post?wait=true`, { method: "post", json: { text: "é" }, signal: signal() });
    expect(answer).toMatchObject({ status: 201, ok: true });
    expect(answer.headers.get("x-ratelimit-remaining")).toBe("4");
    expect(answer.headers.get("retry-after")).toBeNull();
    expect(await answer.text()).toBe('{"ok":true}');
    expect(seen[0]).toMatchObject({ method: "POST", url: "/post?wait=true", body: '{"text":"é"}' });
    expect(seen[0]?.headers).toMatchObject({ "content-type": "application/json", "content-length": "13" });
    expect(seen[0]?.headers["user-agent"]).toMatch(/^mcops\//);
    expect(seen[0]?.headers.connection).toBe("close");
  });

  it("follows a redirect: a 303 or a POST's 302 becomes a GET, a 307 keeps the POST, another origin gets no key", async () => {
    const other = await serve((_req, res) => res.end("elsewhere"));
    const { url, seen } = await serve((req, res) => {
      const to: Record<string, [number, string]> = {
        "/see-other": [303, "/done"],
        "/found": [302, "/done"],
        "/temporary": [307, "/done"],
        "/away": [301, `${other.url}/there`],
      };
      const hop = to[req.url];
      if (hop) res.writeHead(hop[0], { location: hop[1] }).end();
      else res.end("here");
    });
    const headers = { authorization: "Bearer ptlc_key" };
    for (const path of ["/see-other", "/found", "/temporary"]) {
      expect(await (await send(`${url}${path}`, { method: "post", json: {}, headers, signal: signal() })).text()).toBe(
        "here",
      );
    }
    expect(seen.filter((r) => r.url === "/done").map((r) => [r.method, r.body])).toEqual([
      ["GET", ""],
      ["GET", ""],
      ["POST", "{}"],
    ]);
    expect(seen.every((r) => r.headers.authorization === "Bearer ptlc_key")).toBe(true);
    expect(await (await send(`${url}/away`, { method: "get", headers, signal: signal() })).text()).toBe("elsewhere");
    expect(other.seen[0]?.headers.authorization).toBeUndefined();
  });

  it("gives up on a redirect loop after 20 hops, and on a Location that is no address, as fetch does", async () => {
    const { url, seen } = await serve((req, res) =>
      res.writeHead(302, { location: req.url === "/bad" ? "http://[zz" : "/again" }).end(),
    );
    const loop = await send(`${url}/again`, { method: "get", signal: signal() }).catch((e: unknown) => e);
    expect(loop).toBeInstanceOf(TypeError);
    expect((loop as { cause?: { code?: string } }).cause?.code).toBe("ERR_TOO_MANY_REDIRECTS");
    expect(seen).toHaveLength(21);
    const bad = await send(`${url}/bad`, { method: "get", signal: signal() }).catch((e: unknown) => e);
    expect((bad as { cause?: { code?: string } }).cause?.code).toBe("ERR_INVALID_URL");
  });

  it("drops the key on another origin whatever case its name has, and refuses an address with a password", async () => {
    const other = await serve((_req, res) => res.end("elsewhere"));
    const { url } = await serve((_req, res) => res.writeHead(302, { location: `${other.url}/` }).end());
    const headers = { Authorization: "Bearer ptlc_key" };
    expect(await (await send(url, { method: "get", headers, signal: signal() })).text()).toBe("elsewhere");
    expect(other.seen[0]?.headers.authorization).toBeUndefined();
    const withPassword = new URL(other.url);
    withPassword.username = "user";
    withPassword.password = "secret";
    const refused = await send(withPassword.href, { method: "get", signal: signal() }).catch((e: unknown) => e);
    expect((refused as { cause?: { code?: string } }).cause?.code).toBe("ERR_INVALID_URL");
    expect(String((refused as Error & { cause: Error }).cause.message)).not.toContain("secret");
    expect(other.seen).toHaveLength(1);
  });

  it("closes a redirect's connection even when its body never ends", async () => {
    let closed = false;
    const { url } = await serve((req, res) => {
      if (req.url !== "/moved") return void res.end("here");
      res.writeHead(302, { location: "/here", "content-length": "1000" });
      res.write("never finished");
      res.socket?.once("close", () => {
        closed = true;
      });
    });
    // A signal that never ends anything: only send itself may close that connection.
    const never = new AbortController().signal;
    expect(await (await send(`${url}/moved`, { method: "get", signal: never })).text()).toBe("here");
    await waitUntil(() => closed, "the redirect's connection to close", 30_000);
  });

  it("ends a body read with the signal's reason when the signal ends it", async () => {
    const { url } = await serve((_req, res) => {
      res.writeHead(200, { "content-length": "1000" });
      res.write("x"); // and nothing more
    });
    const controller = new AbortController();
    const answer = await send(url, { method: "get", signal: controller.signal });
    const reading = answer.text();
    controller.abort(new DOMException("timed out", "TimeoutError"));
    await expect(reading).rejects.toMatchObject({ name: "TimeoutError" });
  });

  it('fails the reading of a body cut off midway ("terminated", as fetch says)', async () => {
    const { url } = await serve((_req, res) => {
      res.writeHead(200, { "content-length": "100" });
      res.write("half");
      setImmediate(() => res.socket?.destroy());
    });
    const answer = await send(`${url}/`, { method: "get", signal: signal() });
    await expect(answer.text()).rejects.toThrow("terminated");
  });

  it("fails to connect as fetch does (a TypeError whose cause has the code), and an abort with the signal's reason", async () => {
    const { url } = await serve(() => undefined); // never answers
    const closed = new URL(url);
    await new Promise((resolve) => servers.pop()?.close(resolve)); // nothing listens there any more
    const refused = await send(`${closed.origin}/`, { method: "get", signal: signal() }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(TypeError);
    expect((refused as { cause?: { code?: string } }).cause?.code).toBe("ECONNREFUSED");
    const hanging = await serve(() => undefined);
    const controller = new AbortController();
    const pending = send(`${hanging.url}/`, { method: "get", signal: controller.signal });
    controller.abort(new DOMException("timed out", "TimeoutError"));
    await expect(pending).rejects.toMatchObject({ name: "TimeoutError" });
    const scheme = await send("ftp://127.0.0.1/", { method: "get", signal: signal() }).catch((e: unknown) => e);
    expect(scheme).toBeInstanceOf(TypeError);
    expect((scheme as { cause?: { code?: string } }).cause?.code).toBe("EPROTO");
  });
});

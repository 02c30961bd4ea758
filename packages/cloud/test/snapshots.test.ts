import { describe, expect, it } from "vitest";
import type { Snapshot } from "../src/digitalocean.ts";
import { serverKey, serverSnapshots, serverTag, snapshotName } from "../src/snapshots.ts";

/** Issue 30: one server, one identity (the play host) on an account that may hold others. */

describe("snapshot names", () => {
  const at = Date.UTC(2026, 10, 21, 6, 12, 45);
  const snap = (name: string, created: string): Snapshot =>
    ({ id: name, name, created_at: created, resource_id: "1", regions: ["fra1"], size_gigabytes: 7 }) as Snapshot;

  it("name the server and the minute; a second hibernation in that minute adds the seconds, and both are this server's", () => {
    const first = snapshotName("play.example.co.uk", at);
    expect(first).toBe("mcops-play.example.co.uk-2026-11-21-0612");
    const second = snapshotName("play.example.co.uk", at, [snap(first, "2026-11-21T06:12:01Z")]);
    expect(second).toBe("mcops-play.example.co.uk-2026-11-21-061245");
    const listed = [snap(first, "2026-11-21T06:12:01Z"), snap(second, "2026-11-21T06:12:50Z")];
    expect(serverSnapshots(listed, { key: "play.example.co.uk" }).map((s) => s.name)).toEqual([second, first]);
    // Another server's, with a host that begins like this one's, is never this server's.
    const other = snap("mcops-play.example.co.uk.evil-2026-11-21-061245", "2026-11-21T06:13:00Z");
    expect(serverSnapshots([other], { key: "play.example.co.uk" })).toEqual([]);
  });

  it("take the identity from a host name only: an underscore would share another server's tag", () => {
    expect(serverKey("Play.Example.co.uk:25565")).toBe("play.example.co.uk");
    expect(serverTag(serverKey("play.example.co.uk"))).toBe("mcops-server:play_example_co_uk");
    for (const bad of ["play_example.co.uk:25565", "play.example.co.uk.:25565", "-play.example.co.uk", "a b.example"]) {
      expect(() => serverKey(bad)).toThrow(/^SERVER_ADDR ".*" is not a host name$/);
    }
  });
});

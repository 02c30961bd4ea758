import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError, UsageError } from "@mcops/core/errors";
import type { Paths } from "@mcops/core/paths";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadSettings } from "../src/settings.ts";

const KEY = `ptlc_${"k".repeat(21)}${"Q".repeat(22)}`;
const VOLUME = "/var/lib/pterodactyl/volumes/1a2b3c4d-0000-4000-8000-00000000abcd";

let paths: Paths;
let file: string;
let root: string;

function write(lines: string[]): void {
  writeFileSync(file, `${lines.join("\n")}\n`);
  chmodSync(file, 0o600);
}

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected an error");
}

const install = { type: "vanilla", list: false, dryRun: false, args: {} } as const;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "mcops-jar-settings-"));
  paths = { configDir: root, logDir: root, stateDir: root, runDir: root };
  file = join(root, "backup.env");
  write([
    "CONTROL_URL=https://panel.example.com/",
    `CONTROL_KEY=${KEY}`,
    "SERVER_ID=1a2b3c4d",
    `WORLD_DIR=${VOLUME}`,
    "DOWNLOAD_CONTACT=ops@example.com",
  ]);
});

afterEach(() => rmSync(root, { recursive: true, force: true }));

describe("jar-download's settings", () => {
  it("reads the panel, the volume and the contact, with the real hosts as the default bases", () => {
    expect(loadSettings({ paths, env: {} }, install)).toEqual({
      bases: {
        paper: "https://fill.papermc.io",
        purpur: "https://api.purpurmc.org",
        mojang: "https://piston-meta.mojang.com",
        fabric: "https://meta.fabricmc.net",
        neoforge: "https://maven.neoforged.net",
        forge: "https://maven.minecraftforge.net",
        forgeFiles: "https://files.minecraftforge.net",
        quilt: "https://meta.quiltmc.org",
        quiltMaven: "https://maven.quiltmc.org/repository/release",
      },
      modrinth: { api: "https://api.modrinth.com", hostMap: {} },
      contact: "ops@example.com",
      worldDir: VOLUME,
      control: { url: "https://panel.example.com", key: KEY, serverId: "1a2b3c4d", owner: { uid: 988, gid: 988 } },
      panel: { url: "https://panel.example.com", key: KEY, serverId: "1a2b3c4d" },
      backup: expect.any(Function),
    });
  });

  it("reads the installer's socket, time and network for a loader: Docker's bridge by default, a network's name else", () => {
    const loader = { ...install, type: "neoforge" } as const;
    expect(loadSettings({ paths, env: {} }, loader).installer).toEqual({
      socket: "/var/run/docker.sock",
      timeoutMs: 15 * 60_000,
      network: "bridge",
    });
    write(["CONTROL_URL=https://panel.example.com", `CONTROL_KEY=${KEY}`, "SERVER_ID=1a2b3c4d", `WORLD_DIR=${VOLUME}`]);
    writeFileSync(file, "INSTALLER_NETWORK=pterodactyl_nw\n", { flag: "a" });
    expect(loadSettings({ paths, env: {} }, loader).installer?.network).toBe("pterodactyl_nw");
    writeFileSync(file, "INSTALLER_NETWORK=container:wings\n", { flag: "a" });
    const error = thrown(() => loadSettings({ paths, env: {} }, loader));
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(/INSTALLER_NETWORK is not a Docker network's name/);
  });

  it("fetches Modrinth's CDN addresses from MODRINTH_CDN_BASE when it is another host", () => {
    const env = { MODRINTH_CDN_BASE: "http://127.0.0.1:8080/cdn/", MODRINTH_API_BASE: "http://127.0.0.1:8080/api" };
    expect(loadSettings({ paths, env }, install).modrinth).toEqual({
      api: "http://127.0.0.1:8080/api",
      hostMap: { "https://cdn.modrinth.com": "http://127.0.0.1:8080/cdn" },
    });
  });

  it("takes a mirror without its trailing slash", () => {
    const env = { DOWNLOAD_BASE: "https://mirror.example/fill/" };
    expect(loadSettings({ paths, env }, install).bases.paper).toBe("https://mirror.example/fill");
  });

  it("reads neither the volume nor the panel for --list, nor the panel for --dry-run", () => {
    write(["DOWNLOAD_CONTACT=ops@example.com", "CONTROL_URL=broken"]);
    expect(loadSettings({ paths, env: {} }, { ...install, list: true })).toMatchObject({
      worldDir: undefined,
      control: undefined,
    });
    const dry = { ...install, dryRun: true, args: { dir: VOLUME } };
    expect(loadSettings({ paths, env: {} }, dry)).toMatchObject({
      worldDir: VOLUME,
      control: undefined,
      panel: undefined,
    });
  });

  it("gives --dry-run the panel when backup.env names it whole, for its image line, but not the jar's owner", () => {
    const dry = loadSettings({ paths, env: { BACKUP_OWNER: "x" } }, { ...install, dryRun: true });
    expect(dry).toMatchObject({ control: undefined, installer: undefined });
    expect(dry.panel).toEqual({ url: "https://panel.example.com", key: KEY, serverId: "1a2b3c4d" });
  });

  it("reads backup's settings only when the run asks, for the volume it works on, naming the way to go without", () => {
    const settings = loadSettings({ paths, env: {} }, install);
    const error = thrown(() => settings.backup("/srv/volume"));
    expect(error).toBeInstanceOf(ConfigError);
    expect(error).toMatchObject({
      message: "RESTIC_REPOSITORY is not set (the pre-upgrade snapshot needs backup's settings)",
      hint: expect.stringMatching(/; or install without a pre-upgrade snapshot: --no-backup$/),
    });
    const password = join(root, "restic-password");
    writeFileSync(password, "secret\n", { mode: 0o600 });
    const env = { RESTIC_REPOSITORY: "/srv/restic", RESTIC_PASSWORD_FILE: password };
    expect(loadSettings({ paths, env }, install).backup("/srv/volume")).toMatchObject({
      WORLD_DIR: "/srv/volume",
      RESTIC_REPOSITORY: "/srv/restic",
    });
  });

  it("asks for DOWNLOAD_CONTACT for Paper and Folia only", () => {
    write([`WORLD_DIR=${VOLUME}`]);
    for (const type of ["paper", "folia"] as const) {
      const error = thrown(() => loadSettings({ paths, env: {} }, { ...install, type, dryRun: true }));
      expect(error).toBeInstanceOf(ConfigError);
      expect(error).toMatchObject({
        message: "DOWNLOAD_CONTACT is not set: PaperMC asks every client for a contact in its User-Agent",
        where: file,
      });
    }
    expect(loadSettings({ paths, env: {} }, { ...install, dryRun: true }).contact).toBeUndefined();
  });

  it("refuses a contact that is neither an e-mail address nor a web address", () => {
    const error = thrown(() => loadSettings({ paths, env: { DOWNLOAD_CONTACT: "nobody" } }, install));
    expect(error).toBeInstanceOf(ConfigError);
    expect(error).toMatchObject({
      message: "DOWNLOAD_CONTACT must be an e-mail address or an https:// address",
      where: "environment variable DOWNLOAD_CONTACT",
    });
    expect(loadSettings({ paths, env: { DOWNLOAD_CONTACT: "https://example.com/ops" } }, install).contact).toBe(
      "https://example.com/ops",
    );
  });

  it("takes --dir over WORLD_DIR and --owner over BACKUP_OWNER", () => {
    const args = { dir: "/srv/volume", owner: "1000:1000" };
    expect(loadSettings({ paths, env: { BACKUP_OWNER: "5:5" } }, { ...install, args })).toMatchObject({
      worldDir: "/srv/volume",
      control: { owner: { uid: 1000, gid: 1000 } },
    });
  });

  it("takes a bad value given as an option for a usage error (exit 2), named by its option", () => {
    const dir = thrown(() => loadSettings({ paths, env: {} }, { ...install, args: { dir: "rel" } }));
    expect(dir).toBeInstanceOf(UsageError);
    expect(dir).toMatchObject({ exitCode: 2, where: "--dir" });
    const owner = thrown(() => loadSettings({ paths, env: {} }, { ...install, args: { owner: "x" } }));
    expect(owner).toMatchObject({ exitCode: 2, where: "--owner", message: "BACKUP_OWNER must be uid:gid in numbers" });
  });
});

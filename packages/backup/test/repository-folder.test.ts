import { describe, expect, it } from "vitest";
import { repositoryFolder, tooWide, unitSafe } from "../src/repository-folder.ts";

const remotes = {
  disk: { type: "local" },
  gdrive: { type: "drive" },
  backups: { type: "alias", remote: "disk:/srv/backups" },
  sealed: { type: "crypt", remote: "disk:/srv/sealed" },
  cloudsealed: { type: "crypt", remote: "gdrive:restic" },
  loop: { type: "alias", remote: "loop:/x" },
  plain: { type: "alias", remote: "/mnt/plain" },
};

describe("repositoryFolder", () => {
  it("finds the folder of a repository on this machine's disk, however restic and rclone name it", () => {
    expect(repositoryFolder("/srv/restic", remotes)).toBe("/srv/restic");
    expect(repositoryFolder("/srv/restic/../restic2/", remotes)).toBe("/srv/restic2");
    expect(repositoryFolder("local:/srv/restic", remotes)).toBe("/srv/restic");
    expect(repositoryFolder("rclone:disk:/srv/restic", remotes)).toBe("/srv/restic");
    expect(repositoryFolder("rclone::local:/srv/restic", remotes)).toBe("/srv/restic");
    expect(repositoryFolder("rclone::local,links:/srv/restic", remotes)).toBe("/srv/restic");
    expect(repositoryFolder("rclone:backups:mc", remotes)).toBe("/srv/backups/mc");
    expect(repositoryFolder("rclone:plain:mc", remotes)).toBe("/mnt/plain/mc");
    // crypt changes names: its whole base folder.
    expect(repositoryFolder("rclone:sealed:mc", remotes)).toBe("/srv/sealed");
  });

  it("finds none for a repository elsewhere, an unknown remote, a relative path or a loop of aliases", () => {
    expect(repositoryFolder("rclone:gdrive:restic", remotes)).toBeUndefined();
    expect(repositoryFolder("rclone:cloudsealed:mc", remotes)).toBeUndefined();
    expect(repositoryFolder("rclone:nosuch:/srv/restic", remotes)).toBeUndefined();
    expect(repositoryFolder("rclone:disk:restic", remotes)).toBeUndefined();
    expect(repositoryFolder("rclone::s3:bucket", remotes)).toBeUndefined();
    expect(repositoryFolder("rclone:loop:x", remotes)).toBeUndefined();
    expect(repositoryFolder("s3:https://s3.example.com/bucket", remotes)).toBeUndefined();
    expect(repositoryFolder("rest:http://127.0.0.1:8000/", remotes)).toBeUndefined();
    expect(repositoryFolder("sftp:user@host:/srv/restic", remotes)).toBeUndefined();
    // A name rclone's config could hold that is also an Object property.
    expect(repositoryFolder("rclone:constructor:/srv", remotes)).toBeUndefined();
  });

  it("writes into a unit file only a folder systemd reads as it is", () => {
    expect(unitSafe("/srv/restic")).toBe(true);
    expect(unitSafe("/srv/my backups")).toBe(false);
    expect(unitSafe("/srv/100%")).toBe(false);
    expect(unitSafe('/srv/"x"')).toBe(false);
    expect(unitSafe("/srv/x\nExecStartPre=/bin/sh")).toBe(false);
  });

  it("allows no folder that would open the system to the idle monitor's sandbox", () => {
    const wide = { up: { type: "alias", remote: "/srv/backups" }, root: { type: "alias", remote: "/" } };
    for (const repository of [
      "/",
      "/srv/restic/../..",
      "rclone:up:../..",
      "rclone:root:etc",
      "/etc",
      "/etc/mc-backup",
    ]) {
      const folder = repositoryFolder(repository, wide) as string;
      expect(tooWide(folder), `${repository} (${folder})`).toBeDefined();
    }
    for (const folder of [
      "/usr/local/restic",
      "/var",
      "/var/lib",
      "/root",
      "/root/.ssh/r",
      "/mnt",
      "/opt",
      "/srv",
      "/home",
    ])
      expect(tooWide(folder), folder).toBeDefined();
    for (const folder of [
      "/srv/restic",
      "/mnt/backup/restic",
      "/root/restic",
      "/var/backups/restic",
      "/backup",
      "/data/r",
    ])
      expect(tooWide(folder), folder).toBeUndefined();
  });
});

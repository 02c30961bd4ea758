import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type TempDir, tempDir } from "../src/http.ts";
import { type TestInstallerOptions, testInstallerJar } from "../src/installer.ts";

let dir: TempDir;

beforeEach(() => {
  dir = tempDir("mcops-installer-");
});

afterEach(() => dir.cleanup());

/** Runs the jar with Debian's java in the temp dir, as the real installer runs in the server's directory. */
function run(options: TestInstallerOptions, args: string[]) {
  writeFileSync(join(dir.path, "installer.jar"), testInstallerJar(options));
  const result = spawnSync("java", ["-jar", "installer.jar", ...args], { cwd: dir.path, timeout: 60_000 });
  return { code: result.status, out: `${result.stdout}${result.stderr}` };
}

const at = (rel: string) => join(dir.path, rel);

describe("test installer jar", () => {
  it("Forge before 1.17 --installServer: forge-<mc>-<v>.jar and minecraft_server.<mc>.jar at the top, no run.sh", () => {
    const { code, out } = run({ loader: "forge", version: "14.23.5.2860", game: "1.12.2" }, ["--installServer"]);
    expect(code).toBe(0);
    expect(out).toContain("The server installed successfully");
    expect(statSync(at("forge-1.12.2-14.23.5.2860.jar")).isFile()).toBe(true);
    expect(statSync(at("minecraft_server.1.12.2.jar")).isFile()).toBe(true);
    expect(statSync(at("libraries/net/minecraft/launchwrapper/1.12/launchwrapper-1.12.jar")).isFile()).toBe(true);
    expect(existsSync(at("run.sh"))).toBe(false);
    expect(existsSync(at("libraries/net/minecraftforge"))).toBe(false);
  });

  it("NeoForge --installServer: run.sh (executable), run.bat, user_jvm_args.txt, the args files, vanilla under libraries/", () => {
    const { code, out } = run({ loader: "neoforge", version: "21.1.77", game: "1.21.1" }, ["--installServer", "."]);
    expect(code).toBe(0);
    expect(out).toContain("The server installed successfully");
    const args = "libraries/net/neoforged/neoforge/21.1.77";
    expect(readFileSync(at("run.sh"), "utf8")).toContain(`java @user_jvm_args.txt @${args}/unix_args.txt "$@"`);
    expect(statSync(at("run.sh")).mode & 0o111).not.toBe(0);
    expect(readFileSync(at("run.bat"), "utf8")).toContain(`@${args}/win_args.txt %*`);
    expect(readFileSync(at(`${args}/unix_args.txt`), "utf8")).toContain("--fml.neoForgeVersion 21.1.77");
    expect(existsSync(at(`${args}/win_args.txt`))).toBe(true);
    expect(existsSync(at("libraries/net/minecraft/server/1.21.1/server-1.21.1.jar"))).toBe(true);
    expect(existsSync(at("user_jvm_args.txt"))).toBe(true);
    expect(existsSync(at("installer.jar.log"))).toBe(true);
  });

  it("Forge keeps an existing user_jvm_args.txt and writes under net/minecraftforge/forge/<mc>-<v>", () => {
    writeFileSync(at("user_jvm_args.txt"), "-Xmx6G\n");
    const { code } = run({ loader: "forge", version: "47.3.0", game: "1.20.1" }, ["--installServer"]);
    expect(code).toBe(0);
    expect(readFileSync(at("user_jvm_args.txt"), "utf8")).toBe("-Xmx6G\n");
    expect(existsSync(at("libraries/net/minecraftforge/forge/1.20.1-47.3.0/unix_args.txt"))).toBe(true);
  });

  it("Quilt install server: libraries, quilt-server-launch.jar, server.jar; extra files", () => {
    const options = { loader: "quilt", version: "0.26.4", game: "1.20.1", extra: { "mods/a.jar": "A" } } as const;
    const { code } = run(options, ["install", "server", "1.20.1", "0.26.4", "--download-server", "--install-dir=out"]);
    expect(code).toBe(0);
    for (const file of [
      "quilt-server-launch.jar",
      "server.jar",
      "libraries/org/quiltmc/quilt-loader/0.26.4/quilt-loader-0.26.4.jar",
    ]) {
      expect(existsSync(at(`out/${file}`))).toBe(true);
    }
    expect(readFileSync(at("out/mods/a.jar"), "utf8")).toBe("A");
  });

  it("fail ends with 1; exit0-nothing ends with 0 having written nothing (Forge's certificate check, Quilt's errors)", () => {
    const failed = run({ loader: "neoforge", version: "21.1.77", game: "1.21.1", behaviour: "fail" }, [
      "--installServer",
    ]);
    expect(failed.code).toBe(1);
    expect(failed.out).toContain("java.io.IOException: Failed to download");
    expect(existsSync(at("run.sh"))).toBe(false);
    const nothing = run({ loader: "forge", version: "47.3.0", game: "1.20.1", behaviour: "exit0-nothing" }, [
      "--installServer",
    ]);
    expect(nothing.code).toBe(0);
    expect(existsSync(at("run.sh"))).toBe(false);
    const quilt = run({ loader: "quilt", version: "0.26.4", game: "1.20.1" }, [
      "install",
      "server",
      "1.99",
      "--install-dir=q",
    ]);
    expect(quilt.code).toBe(0);
    expect(quilt.out).toContain("Minecraft version 1.99 does not exist");
    expect(existsSync(at("q"))).toBe(false);
  });
});

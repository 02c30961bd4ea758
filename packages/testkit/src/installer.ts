/**
 * A loader installer jar for tests, built from Java source kept in this package (fixtures/installer/Installer.java)
 * and compiled with Debian's JDK: the real Forge, NeoForge and Quilt installers download hundreds of MiB from the
 * vendors' hosts, which tests cannot reach; this one writes the same layout into the target directory, offline, and
 * fails, hangs or ends with 0 having written nothing when a test asks it to. jar-download runs it in the Docker
 * stand-in's "container" (the test machine's own /usr/bin/java, as the game's user), as it runs the real one.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type InstallerLoader, zipFile } from "./downloads.ts";

/**
 * - `ok`: writes the loader's files and ends with 0.
 * - `fail`: prints a download's stack trace and ends with 1, having written the vanilla jar only (NeoForge, Forge).
 * - `hang`: prints a line and sleeps until it is killed.
 * - `exit0-nothing`: ends with 0 having written nothing, as Forge's installer does when its certificate check fails
 *   and Quilt's does on every error (its failures are printed, never turned into an exit code).
 * - `deep` (NeoForge, Forge): writes the loader's files and a directory 5,000 levels deep in libraries/, as a hostile
 *   or broken installer could.
 */
export type InstallerBehaviour = "ok" | "fail" | "hang" | "exit0-nothing" | "deep";

export interface TestInstallerOptions {
  loader: InstallerLoader;
  /** The loader's version: NeoForge `21.1.77`, Forge `47.3.0` (the part after the game version), Quilt `0.26.4`. */
  version: string;
  /** The game version it installs for. */
  game: string;
  behaviour?: InstallerBehaviour;
  /** More files it writes into the target directory on success (relative path → contents). */
  extra?: Record<string, string | Buffer>;
}

const SOURCE = fileURLToPath(new URL("../fixtures/installer/Installer.java", import.meta.url));

/** The installer jar's bytes: Installer.class (compiled once per source, cached), installer.properties, extras. */
export function testInstallerJar(options: TestInstallerOptions): Buffer {
  const properties: Record<string, string> = {
    loader: options.loader,
    version: options.version,
    game: options.game,
    behaviour: options.behaviour ?? "ok",
  };
  const extras = Object.entries(options.extra ?? {});
  properties["extra.count"] = String(extras.length);
  extras.forEach(([name], i) => {
    properties[`extra.${i}`] = name;
  });
  const manifest = "Manifest-Version: 1.0\r\nMain-Class: Installer\r\nCreated-By: mcops testkit\r\n\r\n";
  return zipFile(
    [
      { name: Buffer.from("META-INF/MANIFEST.MF"), data: Buffer.from(manifest) },
      { name: Buffer.from("Installer.class"), data: compiledInstaller() },
      { name: Buffer.from("installer.properties"), data: Buffer.from(propertiesText(properties), "latin1") },
      ...extras.map(([, data], i) => ({ name: Buffer.from(`extra/${i}`), data: Buffer.from(data) })),
    ],
    { deflate: true },
  );
}

/**
 * Installer.class, compiled by `javac --release 8` into a directory under the OS temp dir named by the source's
 * sha256: once per machine and source, whichever test worker gets there first (each compiles into its own directory
 * and renames it into place; a loser uses the winner's).
 */
function compiledInstaller(): Buffer {
  return readFileSync(compileTestInstaller());
}

/**
 * Compiles the test installer once per machine and source (nothing when it is already), and returns where
 * Installer.class is: a test package's vitest globalSetup calls it, so that javac's seconds on a fresh machine are
 * never spent inside a test's time limit.
 */
export function compileTestInstaller(): string {
  const source = readFileSync(SOURCE);
  const digest = createHash("sha256").update(source).digest("hex").slice(0, 16);
  const cache = join(tmpdir(), `mcops-test-installer-${digest}`);
  const compiled = join(cache, "Installer.class");
  if (!existsSync(compiled)) {
    const scratch = mkdtempSync(join(tmpdir(), "mcops-test-installer-build-"));
    try {
      javac(scratch);
      renameSync(scratch, cache);
    } catch (error) {
      rmSync(scratch, { recursive: true, force: true });
      if (!existsSync(compiled)) throw error;
    }
  }
  return compiled;
}

function javac(outDir: string): void {
  try {
    execFileSync("javac", ["-Xlint:-options", "--release", "8", "-d", outDir, SOURCE], {
      stdio: ["ignore", "ignore", "pipe"],
      timeout: 120_000,
    });
  } catch (error) {
    const detail = (error as { stderr?: Buffer }).stderr?.toString("utf8").trim() || (error as Error).message;
    throw new Error(
      `the test installer could not be compiled: ${detail} — install Debian's JDK (apt-get install openjdk-17-jdk-headless; scripts/setup.sh does)`,
    );
  }
}

/** java.util.Properties' text form: backslashes and line ends escaped, anything past Latin-1's ASCII as \uXXXX. */
function propertiesText(properties: Record<string, string>): string {
  const escaped = (value: string) =>
    value
      .replace(/\\/g, "\\\\")
      .replace(/\n/g, "\\n")
      .replace(/\r/g, "\\r")
      .replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)
      .replace(/^ /, "\\ ");
  return Object.entries(properties)
    .map(([key, value]) => `${key}=${escaped(value)}\n`)
    .join("");
}

import { execFileSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * `npm run release`: mcops-<version>-linux-x64.tar.gz in release/, holding everything install.sh needs on a VM with no
 * network: the tools' bundles, the Node runtime (the pinned toolchain Node; VMs with Ubuntu 22.04 have no Node 22),
 * install.sh, the systemd units, the cron and logrotate files, the env templates, the dashboard's nginx site and the
 * deploy README.
 * `node scripts/release.ts --stage DIR` only lays the tree out in DIR (the deploy tests install from it);
 * `--tarball DIR` makes the tarball in DIR instead of release/ (the system test installs it in a booted Debian).
 */
const repo = fileURLToPath(new URL("..", import.meta.url));
const { version } = JSON.parse(readFileSync(join(repo, "package.json"), "utf8")) as { version: string };
const TOOLS: Record<string, string> = {
  webhook: "webhook",
  backup: "backup",
  "restart-with-warning": "restart-with-warning",
  "idle-monitor": "idle-monitor",
  "log-tailer": "log-tailer",
  "jar-download": "jar-download",
  revive: "revive",
  hibernate: "revive",
  dashboard: "dashboard",
  certs: "certs",
};

export function stage(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, "lib"), { recursive: true });
  mkdirSync(join(dir, "runtime"), { recursive: true });
  for (const [tool, pkg] of Object.entries(TOOLS)) {
    const bundle = join(repo, "packages", pkg, "dist", `${tool}.mjs`);
    if (!existsSync(bundle)) throw new Error(`release: ${bundle} is missing — run npm run build first`);
    copyFileSync(bundle, join(dir, "lib", `${tool}.mjs`));
  }
  copyFileSync(join(repo, "node_modules", "node", "bin", "node"), join(dir, "runtime", "node"));
  chmodSync(join(dir, "runtime", "node"), 0o755);
  for (const part of ["install.sh", "README.md", "systemd", "cron.d", "logrotate.d", "env", "nginx"]) {
    cpSync(join(repo, "deploy", part), join(dir, part), { recursive: true });
  }
  // The documents the tools' messages and units cite (docs/system.md 2.1, SECURITY.md, a tool's README), as they are
  // named in the repository, under docs/ (install.sh puts them in <prefix>/docs/).
  cpSync(join(repo, "docs"), join(dir, "docs"), { recursive: true, filter: (path) => !/\.(?!md$)[^/]+$/.test(path) });
  copyFileSync(join(repo, "SECURITY.md"), join(dir, "docs", "SECURITY.md"));
  for (const pkg of readdirSync(join(repo, "packages"))) {
    const readme = join(repo, "packages", pkg, "README.md");
    if (!existsSync(readme)) continue;
    mkdirSync(join(dir, "docs", "packages", pkg), { recursive: true });
    copyFileSync(readme, join(dir, "docs", "packages", pkg, "README.md"));
  }
  writeFileSync(join(dir, "VERSION"), `${version}\n`);
}

const args = process.argv.slice(2);
if (args[0] === "--stage") {
  stage(args[1] ?? join(repo, ".release", "stage"));
} else if (import.meta.url === `file://${process.argv[1]}`) {
  const name = `mcops-${version}-linux-x64`;
  const out = args[0] === "--tarball" && args[1] ? args[1] : join(repo, "release");
  const work = join(out, ".release");
  stage(join(work, name));
  mkdirSync(out, { recursive: true });
  const tarball = join(out, `${name}.tar.gz`);
  execFileSync("tar", ["-czf", tarball, "-C", work, "--owner=0", "--group=0", name]);
  rmSync(work, { recursive: true, force: true });
  const size = (readFileSync(tarball).length / 1024 / 1024).toFixed(1);
  console.log(`${tarball} (${size} MiB): unpack on the VM and run ./${name}/install.sh`);
}

#!/usr/bin/env bash
# One-time (and self-healing) set-up for a clone: installs the npm dependencies, which bring the pinned toolchain
# Node (the registry's `node` package), and checks that it runs. Every root script calls this first, so a fresh clone
# needs nothing installed by hand. Quiet and fast when there is nothing to do.
set -euo pipefail
cd "$(dirname "$0")/.."

want_node=$(sed -n 's/^ *"node": "\([0-9.]*\)",\{0,1\}$/\1/p' package.json | head -n 1)
stamp=node_modules/.mcops-setup
lock_sum=$(sha256sum package-lock.json 2>/dev/null | cut -d' ' -f1 || true)

if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$lock_sum" ] || [ ! -x node_modules/.bin/node ]; then
  echo "setup: npm dependencies: installing (toolchain Node $want_node, build and test tools)..." >&2
  if [ -f package-lock.json ]; then
    # Not `npm ci`: this registry mirror serves only the packages of this platform, so the lock file lacks the
    # optional binaries of other platforms (biome, rollup, turbo) and `npm ci` refuses it as out of sync.
    npm install --no-audit --no-fund --no-save --loglevel=error
  else
    npm install --no-audit --no-fund --loglevel=error
    lock_sum=$(sha256sum package-lock.json | cut -d' ' -f1)
  fi
  printf '%s' "$lock_sum" > "$stamp"
else
  echo "setup: npm dependencies: up to date" >&2
fi

# The backup tool drives real restic and rclone (Debian packages); its tests and the demo run them for real.
# setpriv (util-linux) lets a test run restic as root without the right to read every file.
# The dashboard's tests drive Debian's Chromium headless (playwright-core, over CDP); its WebDriver, chromium-driver,
# comes along for WebDriver clients.
missing=()
command -v restic >/dev/null 2>&1 || missing+=(restic)
command -v rclone >/dev/null 2>&1 || missing+=(rclone)
command -v setpriv >/dev/null 2>&1 || missing+=(util-linux)
# The hostile-volume tests hold restic on a file lease as the game's user would (Python's fcntl; Node has none).
[ -x /usr/bin/python3 ] || missing+=(python3)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
# The certs tests make their certificates with openssl (the tool itself parses them with Node's crypto).
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
# jar-download's loader tests compile a test installer jar (testkit fixtures/installer) with Debian's JDK and run it
# with its java (the Docker stand-in's "container" runs the command on this machine).
command -v javac >/dev/null 2>&1 || missing+=(openjdk-17-jdk-headless)
# The drill's attack tests measure its peak memory with GNU time.
[ -x /usr/bin/time ] || missing+=(time)
# The deploy checks run logrotate -d on the shipped config (systemd-analyze comes with systemd).
command -v logrotate >/dev/null 2>&1 || [ -x /usr/sbin/logrotate ] || missing+=(logrotate)
# The system test boots Debian 11, 12 and 13, each built by debootstrap, in systemd-nspawn (systemd-container) and runs
# commands in them with nsenter (util-linux).
[ -x /usr/sbin/debootstrap ] || missing+=(debootstrap)
command -v systemd-nspawn >/dev/null 2>&1 || missing+=(systemd-container)
# jar-download's real Docker Engine tests run Debian's dockerd (docker.io brings containerd and runc) and serve their
# images from Debian's registry (docker-registry); scripts/docker-images.sh builds those once.
[ -x /usr/sbin/dockerd ] || missing+=(docker.io)
command -v docker-registry >/dev/null 2>&1 || missing+=(docker-registry)
# The backup tests' version matrix fetches older and newer restic and rclone with apt, verified by Debian's keyring.
[ -f /usr/share/keyrings/debian-archive-keyring.gpg ] || missing+=(debian-archive-keyring)
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: Debian packages: installing ${missing[*]}..." >&2
  if [ "$(id -u)" = 0 ]; then
    sudo=""
  elif command -v sudo >/dev/null 2>&1; then
    sudo="sudo"
  else
    echo "setup: ${missing[*]} missing and not root — run: apt-get install ${missing[*]}" >&2
    exit 1
  fi
  $sudo apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
else
  echo "setup: Debian packages: restic, rclone, python3, chromium and the rest are there" >&2
fi

# The restic and rclone of Debian 11, 12 and 13 for the backup tests' version matrix, unpacked into a cache, never
# installed (scripts/restic-versions.sh).
bash scripts/restic-versions.sh

# Debian 13's Docker Engine beside Debian 12's, and the images shaped like the eggs' Java images in a registry's storage
# (scripts/docker-images.sh; as root only: dockerd needs it).
bash scripts/docker-images.sh

have_node=$(node_modules/.bin/node --version 2>/dev/null || true)
if [ "$have_node" != "v$want_node" ]; then
  echo "setup: the toolchain Node in node_modules/.bin is '${have_node:-missing}', expected v$want_node — run: rm -rf node_modules && npm run setup" >&2
  exit 1
fi
echo "setup: toolchain Node $have_node in node_modules/.bin" >&2

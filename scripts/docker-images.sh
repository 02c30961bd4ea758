#!/usr/bin/env bash
# The real Docker Engine tests (issue 44): two Docker Engines and a registry of images shaped like the eggs' Java
# images, made once per machine into a cache that the tests only read.
#
# - Engine 20.10: Debian 12's docker.io (set-up installs it; dockerd, containerd, runc), API 1.41, as Debian 11 and 12
#   ship it.
# - Engine 26.1: Debian 13's docker.io and containerd, fetched with apt (scripts/debian-download.sh) and unpacked,
#   never installed: API 1.45. The tests run it with DOCKER_MIN_API_VERSION=1.44, Docker 29.0's floor. Its runc is
#   Debian 12's (the system's): Debian 13's runc needs glibc 2.38, which Debian 12 does not have.
# - The images (packages/testkit/fixtures/docker-images, whose README says how each follows the real one): Debian 12
#   and 13 root file systems made by debootstrap with Debian's OpenJDK, each image their layer and one of its own
#   files (scripts/docker-image.py, from images.json there), loaded into a private dockerd and pushed into a registry
#   (Debian's docker-registry) whose storage is the cache. The tests serve that storage on 127.0.0.1 and pull from it
#   with a fresh dockerd: every pull is real.
#
# Where: /var/cache/mcops-test/docker (MCOPS_DOCKER_CACHE names another place). dockerd needs root: without it this
# says so and ends with 0, and the real Docker tests say the same. One builder at a time (flock); the images are built
# in images-<key>.partial and renamed when complete, so a run that was killed leaves nothing that looks finished.
# <key> is a hash of what makes the images (images.json, the scripts put in them, docker-image.py): changing any builds
# them again. Quiet when all is there.
set -euo pipefail
cd "$(dirname "$0")/.."
umask 022
# Globs in byte order, whatever the caller's locale: the key below depends on the files' order (testkit's
# docker-engine.ts computes the same key to find this clone's images).
export LC_ALL=C

cache=${MCOPS_DOCKER_CACHE:-/var/cache/mcops-test/docker}
fixtures=packages/testkit/fixtures/docker-images
key=$(cat scripts/docker-image.py "$fixtures"/images.json "$fixtures"/*.sh | sha256sum | cut -c1-12)
images="$cache/images-$key"

if [ "$(id -u)" != 0 ]; then
  echo "setup: docker engines: not root — the real Docker Engine tests need root to run dockerd" >&2
  exit 0
fi
for tool in dockerd containerd runc docker-registry debootstrap; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "setup: docker engines: $tool is missing — run: apt-get install docker.io docker-registry debootstrap" >&2
    exit 1
  fi
done

complete() {
  [ -x "$cache/engine-26.1/usr/sbin/dockerd" ] && [ -f "$images/images.json" ] && touch "$images"
}
if complete; then
  echo "setup: docker engines: 20.10 (Debian 12) and 26.1 (Debian 13), registry of images in $images" >&2
  exit 0
fi

mkdir -p "$cache"
exec 9>"$cache/.lock"
if ! flock -n 9; then
  echo "setup: docker engines: another set-up is building them into $cache; waiting for it..." >&2
  flock 9
fi
if complete; then
  echo "setup: docker engines: 20.10 (Debian 12) and 26.1 (Debian 13), registry of images in $images" >&2
  exit 0
fi

if [ ! -x "$cache/engine-26.1/usr/sbin/dockerd" ]; then
  echo "setup: docker engines: fetching Debian 13's docker.io and containerd..." >&2
  part="$cache/engine-26.1.partial"
  rm -rf "$part"
  bash scripts/debian-download.sh trixie "$part/debs" docker.io containerd
  for deb in "$part"/debs/*.deb; do dpkg-deb -x "$deb" "$part"; done
  rm -rf "$part/debs" "$cache/engine-26.1"
  mv "$part" "$cache/engine-26.1"
fi

# An engine unpacked before runc was left out holds Debian 13's runc, which cannot run here.
rm -f "$cache/engine-26.1/usr/sbin/runc"

part="$images.partial"
echo "setup: docker engines: building the test images (debootstrap of Debian 12 and 13 with OpenJDK; a few minutes, once)..." >&2
# A root file system already made by a run that stopped later is kept (its tar is renamed into place when complete).
mkdir -p "$part/build"
rm -rf "$part/registry" "$part/build/daemon"
mkdir -p "$part/registry"
archive=$(bash scripts/debian-archive.sh)
# Both root file systems at once; each is tarred as it ends (docker import reads the tar).
root_fs() {
  local release=$1 packages=$2 name=$3
  [ -f "$part/build/$name.tar" ] && return 0
  rm -rf "$part/build/$name"
  if ! debootstrap --variant=minbase --include="$packages" "$release" "$part/build/$name" "$archive" \
    >"$part/build/$name.log" 2>&1; then
    echo "setup: docker engines: debootstrap of $release failed; its log: $part/build/$name.log" >&2
    tail -n 5 "$part/build/$name.log" >&2
    return 1
  fi
  # What apt fetched is not part of an image.
  rm -rf "$part/build/$name/var/cache/apt/archives/"*.deb "$part/build/$name/var/lib/apt/lists/"*
  tar -C "$part/build/$name" -cf "$part/build/$name.tar.partial" .
  mv "$part/build/$name.tar.partial" "$part/build/$name.tar"
  rm -rf "$part/build/$name"
}
# Each base named in images.json: its release and packages.
pids=()
while read -r name release packages; do
  root_fs "$release" "$packages" "$name" &
  pids+=($!)
done < <(python3 -c '
import json, sys
for name, base in json.load(open(sys.argv[1]))["bases"].items():
    print(name, base["release"], ",".join(base["packages"]))
' "$fixtures/images.json")
for pid in "${pids[@]}"; do wait "$pid"; done

# A private dockerd (Debian 12's) and a registry writing into the cache, for the build only. Its socket and exec root
# are in a short folder of /tmp: containerd's socket path, inside the exec root, must fit a Unix socket's 108 bytes.
daemon=$(mktemp -d /tmp/mcops-docker-build.XXXXXX)
dockerd --storage-driver=vfs --iptables=false --ip-forward=false --ip-masq=false --bridge=none \
  --data-root "$daemon/data" --exec-root "$daemon/exec" --pidfile "$daemon/pid" -H "unix://$daemon/docker.sock" \
  >"$daemon/log" 2>&1 &
dockerd_pid=$!
cat >"$part/build/registry.yml" <<EOF
version: 0.1
log:
  level: info
  formatter: text
storage:
  filesystem:
    rootdirectory: $part/registry
  maintenance:
    uploadpurging:
      enabled: false
http:
  addr: 127.0.0.1:0
EOF
docker-registry serve "$part/build/registry.yml" >"$part/build/registry.log" 2>&1 &
registry_pid=$!
stop() {
  kill "$registry_pid" 2>/dev/null || true
  kill "$dockerd_pid" 2>/dev/null || true
  wait "$registry_pid" "$dockerd_pid" 2>/dev/null || true
  rm -rf "$daemon"
}
trap stop EXIT

registry=""
for _ in $(seq 100); do
  registry=$(sed -n 's/.*msg="listening on \(127\.0\.0\.1:[0-9]*\)".*/\1/p' "$part/build/registry.log" | head -n 1)
  [ -n "$registry" ] && [ -S "$daemon/docker.sock" ] && break
  sleep 0.2
done
if [ -z "$registry" ] || [ ! -S "$daemon/docker.sock" ]; then
  echo "setup: docker engines: the build's dockerd or registry did not start; their logs:" >&2
  tail -n 3 "$daemon/log" "$part/build/registry.log" >&2
  exit 1
fi
export DOCKER_HOST="unix://$daemon/docker.sock"
# Debian's own client (docker.io).
docker=/usr/bin/docker
for _ in $(seq 300); do
  "$docker" version >/dev/null 2>&1 && break
  sleep 0.2
done
if ! "$docker" version >/dev/null 2>&1; then
  echo "setup: docker engines: the build's dockerd did not answer; its log:" >&2
  tail -n 5 "$daemon/log" >&2
  exit 1
fi

build_log="$part/build/build.log"
refs=$(python3 -c 'import json, sys; print("\n".join(i["ref"] for i in json.load(open(sys.argv[1]))["images"]))' "$fixtures/images.json")
{
  python3 scripts/docker-image.py "$fixtures" "$part/build" "$part/build/images.tar" "$registry"
  "$docker" load -i "$part/build/images.tar"
  for ref in $refs; do "$docker" push "$registry/$ref"; done
} >"$build_log" 2>&1 || {
  echo "setup: docker engines: building the images failed; its log: $build_log" >&2
  tail -n 5 "$build_log" >&2
  exit 1
}

# images.json: each image's reference without the registry's address (the tests prefix their own), and its config as
# the engine reports it.
{
  echo "{"
  echo "  \"images\": ["
  n=0
  count=$(wc -w <<<"$refs")
  for repo in $refs; do
    config=$("$docker" image inspect --format '{{json .Config}}' "$registry/$repo")
    n=$((n + 1))
    sep=","
    [ "$n" = "$count" ] && sep=""
    echo "    { \"ref\": \"$repo\", \"config\": $config }$sep"
  done
  echo "  ]"
  echo "}"
} >"$part/images.json.partial"

stop
trap - EXIT
rm -rf "$part/build"
mv "$part/images.json.partial" "$part/images.json"
rm -rf "$images"
mv "$part" "$images"
# Other keys' images belong to other clones or branches of this machine, which may be using them now: only those no
# set-up has used for 30 days go.
find "$cache" -maxdepth 1 -name 'images-*' ! -name '*.partial' -mtime +30 -exec rm -rf {} + 2>/dev/null || true
echo "setup: docker engines: 20.10 (Debian 12) and 26.1 (Debian 13), registry of images in $images" >&2

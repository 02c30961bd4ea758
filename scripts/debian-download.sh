#!/usr/bin/env bash
# Usage: debian-download.sh RELEASE DIR PACKAGE...
# Downloads the named packages of one Debian release (bullseye, bookworm, trixie) into DIR as .deb files, with apt
# itself (`apt-get download`) from the archive apt already uses here (scripts/debian-archive.sh), through a private
# sources list, configuration and state directory under DIR/.apt, its Release file verified against Debian's archive
# keyring. Nothing is installed and the machine's apt is not touched. Used by set-up's restic-versions.sh and
# docker-engines.sh. Exits 1 with apt's last lines when apt cannot fetch them or the Release file does not verify.
set -euo pipefail
cd "$(dirname "$0")/.."

release=$1
dir=$2
shift 2
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
if [ ! -f "$keyring" ]; then
  echo "setup: $keyring is missing — run: apt-get install debian-archive-keyring" >&2
  exit 1
fi
archive=$(bash scripts/debian-archive.sh)
apt="$dir/.apt"
rm -rf "$apt"
mkdir -p "$apt/etc/sources.list.d" "$apt/etc/preferences.d" "$apt/etc/apt.conf.d" "$apt/lists/partial" \
  "$apt/archives/partial" "$dir"
: >"$apt/status"
echo "deb [signed-by=$keyring] $archive $release main" >"$apt/etc/sources.list"
# apt reads APT_CONFIG first, then the machine's apt.conf.d (its proxy and network settings stay in force), then
# Dir::Etc::main last: this file, which points every directory at the private ones and clears the machine's hooks
# (an update's or dpkg's Post-Invoke acts on the machine's own apt, not on this one).
cat >"$apt/apt.conf" <<EOF
Dir::Etc::main "$apt/main.conf";
EOF
cat >"$apt/main.conf" <<EOF
#clear APT::Update::Pre-Invoke;
#clear APT::Update::Post-Invoke;
#clear APT::Update::Post-Invoke-Success;
#clear DPkg::Pre-Invoke;
#clear DPkg::Post-Invoke;
Dir::Etc "$apt/etc";
Dir::State "$apt";
Dir::State::lists "$apt/lists";
Dir::State::status "$apt/status";
Dir::Cache "$apt";
Dir::Cache::archives "$apt/archives";
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
Debug::NoLocking "true";
Acquire::Languages "none";
Acquire::IndexTargets::deb::DEP-11::DefaultEnabled "false";
Acquire::IndexTargets::deb::DEP-11-icons::DefaultEnabled "false";
Acquire::IndexTargets::deb::DEP-11-icons-small::DefaultEnabled "false";
Acquire::IndexTargets::deb::Contents-deb::DefaultEnabled "false";
EOF
# apt downloads as its own user _apt where it can; the folder it downloads into is then that user's.
if [ "$(id -u)" = 0 ] && id _apt >/dev/null 2>&1; then chown _apt "$dir"; fi
log="$apt/apt.log"
if ! (export APT_CONFIG="$apt/apt.conf" && apt-get -q update && cd "$dir" && apt-get -q download "$@") >"$log" 2>&1; then
  echo "setup: apt could not fetch Debian $release's $*; its output: $log" >&2
  tail -n 5 "$log" >&2
  exit 1
fi
# apt-get update says a Release file it could not verify as a warning and goes on without it; there is none then.
if grep -q "^W: GPG error\|^E: The repository .* is not signed" "$log"; then
  echo "setup: Debian $release's Release file did not verify against $keyring; apt's output: $log" >&2
  exit 1
fi
rm -rf "$apt"

#!/usr/bin/env bash
# The backup package's version matrix (issue 43): the restic and rclone packages of Debian 11, 12 and 13, fetched with
# apt itself (`apt-get download`) from the archive apt already uses here (scripts/debian-archive.sh), each release
# through a private sources list, configuration and state directory, its Release file verified against Debian's
# archive keyring; unpacked into a cache, never installed: the system's own restic and rclone stay as they are.
# Called by setup.sh. Quiet and fast when the cache is there; one builder at a time (flock); a release is built in
# <release>.partial and renamed when complete, so a run that was killed leaves nothing that looks finished.
#
# Where: /var/cache/mcops-test/restic-versions, beside the system test's root file system. Outside the clone, so the
# ~230 MB of binaries are fetched once per machine (not per clone, and not again after a `git clean`), and where a
# machine keeps caches that can be made again. Without the right to write there (not root): the user's own cache,
# ${XDG_CACHE_HOME:-~/.cache}/mcops-test/restic-versions. MCOPS_RESTIC_VERSIONS names another place. testkit's
# resticVersions() looks in the same places in the same order, for versions.json, which lists each release's
# versions as its binaries say them.
set -euo pipefail
cd "$(dirname "$0")/.."
umask 022

# Debian release, its number; the pairs the tests expect (restic 0.11.0 with rclone 1.53.3, 0.14.0 with 1.60.1,
# 0.18.0 with 1.60.1) are what these releases hold.
releases=(bullseye:11 bookworm:12 trixie:13)
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

candidates=()
if [ -n "${MCOPS_RESTIC_VERSIONS:-}" ]; then
  candidates+=("$MCOPS_RESTIC_VERSIONS")
else
  candidates+=(/var/cache/mcops-test/restic-versions "${XDG_CACHE_HOME:-$HOME/.cache}/mcops-test/restic-versions")
fi

# Whether `dir` holds every release, complete, and versions.json naming each.
complete() {
  local dir=$1 entry
  [ -f "$dir/versions.json" ] || return 1
  for entry in "${releases[@]}"; do
    [ -x "$dir/${entry%%:*}/restic" ] && [ -x "$dir/${entry%%:*}/rclone" ] || return 1
    grep -q "\"release\": \"${entry%%:*}\"" "$dir/versions.json" || return 1
  done
}

summary() {
  local list
  list=$(sed -n 's/.*"release": "\([a-z]*\)", "debian": \([0-9]*\), "restic": "\([^"]*\)", "rclone": "\([^"]*\)".*/\2: \3 + \4/p' "$1/versions.json" | paste -sd ',' | sed 's/,/, /g')
  echo "setup: restic versions: Debian $list in $1" >&2
}

for dir in "${candidates[@]}"; do
  if complete "$dir"; then
    summary "$dir"
    exit 0
  fi
done

# The first place that can be written.
cache=""
for dir in "${candidates[@]}"; do
  if mkdir -p "$dir" 2>/dev/null && [ -w "$dir" ]; then
    cache=$dir
    break
  fi
done
if [ -z "$cache" ]; then
  echo "setup: restic versions: cannot write ${candidates[*]} — set MCOPS_RESTIC_VERSIONS to a folder of your own" >&2
  exit 1
fi
if [ ! -f "$keyring" ]; then
  echo "setup: restic versions: $keyring is missing — run: apt-get install debian-archive-keyring" >&2
  exit 1
fi

exec 9>"$cache/.lock"
if ! flock -n 9; then
  echo "setup: restic versions: another set-up is fetching them into $cache; waiting for it..." >&2
  flock 9
fi
# Another set-up may have built it while this one waited.
if complete "$cache"; then
  summary "$cache"
  exit 0
fi

archive=$(bash scripts/debian-archive.sh)

# Fetches and unpacks one release's restic and rclone into $cache/<release>.
build() {
  local release=$1 number=$2
  local part="$cache/$release.partial" apt="$cache/$release.partial/apt"
  echo "setup: restic versions: fetching Debian $number's ($release) restic and rclone from $archive..." >&2
  rm -rf "$part"
  mkdir -p "$apt/root"
  bash scripts/debian-download.sh "$release" "$apt/download" restic rclone
  local tool deb
  for tool in restic rclone; do
    deb=$(ls "$apt/download/${tool}_"*.deb)
    dpkg-deb -x "$deb" "$apt/root"
    mv "$apt/root/usr/bin/$tool" "$part/$tool"
    chmod 755 "$part/$tool"
    printf '%s' "$(dpkg-deb -f "$deb" Version)" >"$part/$tool.package"
  done
  rm -rf "$apt"
  rm -rf "${cache:?}/$release"
  mv "$part" "$cache/$release"
}

for entry in "${releases[@]}"; do
  release=${entry%%:*}
  if [ ! -x "$cache/$release/restic" ] || [ ! -x "$cache/$release/rclone" ]; then build "$release" "${entry##*:}"; fi
done

# versions.json: what each release's binaries say they are (restic version, rclone version), and its packages.
json_string() { printf '"%s"' "$(printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g')"; }
{
  echo "{"
  echo "  \"archive\": $(json_string "$archive"),"
  echo "  \"pairs\": ["
  n=0
  for entry in "${releases[@]}"; do
    release=${entry%%:*}
    dir="$cache/$release"
    # Run with an environment of their own (nothing of the caller's restic or rclone settings) and a home that goes
    # (rclone makes its config folder). All of the output is read: a pipe closed early would end the binary.
    home=$(mktemp -d)
    restic_says=$(env -i PATH=/usr/bin:/bin HOME="$home" "$dir/restic" version)
    rclone_says=$(env -i PATH=/usr/bin:/bin HOME="$home" "$dir/rclone" version)
    rm -rf "$home"
    restic_says=${restic_says%%$'\n'*}
    rclone_says=${rclone_says%%$'\n'*}
    restic=$(sed -n 's/^restic \([0-9][0-9.]*\) .*/\1/p' <<<"$restic_says")
    rclone=$(sed -n 's/^rclone v\([0-9][0-9.]*\).*/\1/p' <<<"$rclone_says")
    if [ -z "$restic" ] || [ -z "$rclone" ]; then
      echo "setup: restic versions: Debian ${entry##*:}'s binaries did not say their versions ('$restic_says', '$rclone_says')" >&2
      exit 1
    fi
    n=$((n + 1))
    sep=","
    [ "$n" = "${#releases[@]}" ] && sep=""
    echo "    { \"release\": \"$release\", \"debian\": ${entry##*:}, \"restic\": \"$restic\", \"rclone\": \"$rclone\", \"dir\": \"$release\", \"resticSays\": $(json_string "$restic_says"), \"rcloneSays\": $(json_string "$rclone_says"), \"resticPackage\": $(json_string "$(cat "$dir/restic.package")"), \"rclonePackage\": $(json_string "$(cat "$dir/rclone.package")") }$sep"
  done
  echo "  ]"
  echo "}"
} >"$cache/versions.json.partial"
mv "$cache/versions.json.partial" "$cache/versions.json"
summary "$cache"

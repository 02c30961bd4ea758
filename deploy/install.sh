#!/usr/bin/env bash
# mcops install: puts the toolkit on a VM in one step (docs/system.md 1, 2.6, 8, 9). Needs nothing from the network: the Node
# runtime, the tools and every file it installs come with it. Run it from the unpacked release
# (mcops-<version>-linux-x64/install.sh) or from a built clone (deploy/install.sh).
#
#   install.sh [--prefix /opt/mc-tools] [--with-restart] [--create-restic-password] [--download-contact ADDR]
#              [--dry-run] [--root DIR]
#   install.sh --uninstall [--prefix ...] [--dry-run] [--root DIR]
#
# Re-running is safe: files that are already right are not touched; config (/etc/mc-backup/*.env, the cron file) is
# written only when absent. --uninstall stops and disables the services (template instances too), removes the files
# this script writes (in the prefix: nothing else; the prefix directory only once empty), the units, the cron and
# logrotate files, and keeps config, logs and data. --download-contact puts DOWNLOAD_CONTACT (your e-mail or web
# address, which PaperMC asks every client to send) into backup.env when it has none; on a terminal it is asked for. --root installs under another root directory (a test, an image
# build) and leaves systemd alone.
set -euo pipefail

PREFIX=/opt/mc-tools
ROOT=""
DRY=0
UNINSTALL=0
WITH_RESTART=0
CREATE_PASSWORD=0
DOWNLOAD_CONTACT=""

usage() { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; }

while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) PREFIX="${2:?--prefix needs a directory}"; shift 2 ;;
    --prefix=*) PREFIX="${1#*=}"; shift ;;
    --root) ROOT="${2:?--root needs a directory}"; shift 2 ;;
    --root=*) ROOT="${1#*=}"; shift ;;
    --dry-run) DRY=1; shift ;;
    --uninstall) UNINSTALL=1; shift ;;
    --with-restart) WITH_RESTART=1; shift ;;
    --create-restic-password) CREATE_PASSWORD=1; shift ;;
    --download-contact) DOWNLOAD_CONTACT="${2:?--download-contact needs an e-mail or web address}"; shift 2 ;;
    --download-contact=*) DOWNLOAD_CONTACT="${1#*=}"; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "install.sh: unknown option $1 — see install.sh --help" >&2; exit 2 ;;
  esac
done
# DOWNLOAD_CONTACT is written as the env file reads it: one word, nothing a shell would expand.
check_contact() {
  case "$DOWNLOAD_CONTACT" in
    *[[:space:]\'\"\$\`\\]*)
      echo "install.sh: --download-contact must be one word without quotes or \$ ($DOWNLOAD_CONTACT) — e.g. admin@example.com" >&2
      exit 2 ;;
  esac
}
[ -z "$DOWNLOAD_CONTACT" ] || check_contact
case "$PREFIX" in /*) ;; *) echo "install.sh: --prefix must be absolute ($PREFIX) — e.g. /opt/mc-tools" >&2; exit 2 ;; esac
PREFIX="$(realpath -ms -- "$PREFIX")"
# The prefix is written into unit files, the cron file and a sed replacement: nothing they would read otherwise (a space
# splits ExecStart=, % is a specifier, & and # change the replacement).
case "$PREFIX" in
  *[!A-Za-z0-9._/+@,=~-]*)
    echo "install.sh: --prefix may hold only letters, digits and . _ / + @ , = ~ - ($PREFIX) — e.g. /opt/mc-tools" >&2
    exit 2 ;;
esac
ROOT="${ROOT%/}"

HERE="$(cd "$(dirname "$0")" && pwd)"
TOOLS=(webhook backup restart-with-warning idle-monitor log-tailer jar-download revive hibernate dashboard certs)
# docs/contract.md: the names the old scripts had, so existing cron lines and units keep working.
DROPINS=(backup.sh:backup restart-with-warning.sh:restart-with-warning webhook.sh:webhook idle-monitor.py:idle-monitor
  log-tailer.py:log-tailer revive.py:revive)
UNITS=(log-tailer.service log-tailer@.service idle-monitor.service idle-monitor@.service dashboard.service)
# Node's compile cache for the launchers (not under the prefix, which may be shared and is read-only to the units).
CACHE_DIR=/var/cache/mc-tools

# Where the pieces come from: the release layout (lib/, runtime/, systemd/ ... beside this script) or a built clone.
if [ -d "$HERE/lib" ]; then
  LIB="$HERE/lib"; RUNTIME="$HERE/runtime/node"; FILES="$HERE"
else
  REPO="$(cd "$HERE/.." && pwd)"
  LIB=""; RUNTIME="$REPO/node_modules/node/bin/node"; FILES="$HERE"
fi

tool_source() {
  local tool="$1"
  if [ -n "$LIB" ]; then echo "$LIB/$tool.mjs"; return; fi
  local package="$tool"
  [ "$tool" = hibernate ] && package=revive
  echo "$REPO/packages/$package/dist/$tool.mjs"
}

changed=0
say() { echo "$*"; }
run() { if [ "$DRY" = 1 ]; then say "  would: $*"; else "$@"; fi; }
# run_quiet: like run, for a step whose failure and output do not matter (disabling what may not be enabled).
run_quiet() { if [ "$DRY" = 1 ]; then say "  would: $*"; else "$@" >/dev/null 2>&1 || true; fi; }

# put SRC DEST MODE: install a file unless DEST already has the same content and mode.
put() {
  local src="$1" dest="$2" mode="$3"
  if [ -f "$dest" ] && cmp -s "$src" "$dest" && [ "$(stat -c %a "$dest")" = "${mode#0}" ]; then return; fi
  changed=1
  say "install $dest"
  run mkdir -p "$(dirname "$dest")"
  run install -m "$mode" "$src" "$dest"
}

# The files with names another program could use too (docs/*.md, VERSION: the prefix may be shared, /usr/local) that
# install.sh wrote, by their PREFIX-relative names, one a line, in this list (its own name is mcops's alone).
MANIFEST_NAME=lib/mcops-files.txt
declare -A OURS=()
SHIPPED=()

# put_ours SRC REL MODE: like put, for such a file: one that is there, differs and is not in the list is someone else's,
# and is kept.
put_ours() {
  local src="$1" rel="$2" mode="$3"
  if [ -e "$DEST/$rel" ] && [ -z "${OURS[$rel]:-}" ] && ! cmp -s "$src" "$DEST/$rel"; then
    say "keep $DEST/$rel (not installed by mcops)"
    return
  fi
  SHIPPED+=("$rel")
  put "$src" "$DEST/$rel" "$mode"
}

# put_text DEST MODE <<<TEXT: like put, for generated text.
put_text() {
  local dest="$1" mode="$2" tmp
  tmp="$(mktemp)"
  cat > "$tmp"
  put "$tmp" "$dest" "$mode"
  rm -f "$tmp"
}

# config SRC DEST MODE [SHIPPED [OURS...]]: only when absent; never overwritten. SHIPPED names the shipped file in
# messages (SRC may be a temporary file); a DEST equal to SRC or to one of OURS (what install.sh itself may have written
# there) is not the operator's.
config() {
  local src="$1" dest="$2" mode="$3" shipped="${4:-$1}" ours
  if [ -e "$dest" ]; then
    cmp -s "$src" "$dest" && return
    for ours in "${@:5}"; do cmp -s "$ours" "$dest" && return; done
    say "keep $dest (yours; the shipped one is $shipped)"
    return
  fi
  changed=1
  say "create $dest (mode $mode)"
  run mkdir -p "$(dirname "$dest")"
  run install -m "$mode" "$src" "$dest"
}

# add_drill SHIPPED DEST: a cron file from before the weekly restore drill gains its lines; the operator's own lines stay
# as they are. A file that names "backup drill" anywhere (a line commented out included) is left alone.
add_drill() {
  local src="$1" dest="$2"
  [ -f "$dest" ] && ! grep -q 'backup drill' "$dest" || return 0
  changed=1
  say "add the weekly restore drill to $dest"
  [ "$DRY" = 1 ] && return
  { echo; sed -n '/^# The weekly restore drill/,/ drill /p' "$src"; } >> "$dest"
}

link() {
  local target="$1" dest="$2"
  if [ -L "$dest" ] && [ "$(readlink "$dest")" = "$target" ]; then return; fi
  changed=1
  say "link $dest -> $target"
  run ln -sfn "$target" "$dest"
}

declare -A GONE=()

# remove PATH: one file or link, never a directory tree.
remove() {
  local path="$1"
  [ -e "$path" ] || [ -L "$path" ] || return 0
  if [ -d "$path" ] && [ ! -L "$path" ]; then say "keep $path (a directory install.sh did not write)"; return 0; fi
  changed=1
  GONE["$path"]=1
  say "remove $path"
  run rm -f "$path"
}

# Directories other software uses too: never removed, even when empty (PREFIX-relative, without --root).
shared_dir() {
  case "$1" in
    / | /bin | /boot | /dev | /etc | /home | /lib | /lib32 | /lib64 | /media | /mnt | /opt | /proc | /root | /run | \
      /sbin | /srv | /sys | /tmp | /usr | /var) return 0 ;;
  esac
  [[ "$1" =~ ^/(usr|var|home)/[^/]+$ ]] && return 0
  [[ "$1" =~ ^/usr/local/(s?bin|etc|games|include|lib|lib64|libexec|man|share|src)$ ]] && return 0
  [ -n "${HOME:-}" ] && [ "$1" = "$(realpath -ms -- "$HOME")" ]
}

# empty_after DIR: nothing is left in DIR once this run's removals are done (a dry run removes nothing).
empty_after() {
  local entry
  for entry in "$1"/* "$1"/.[!.]* "$1"/..?*; do
    if [ -e "$entry" ] || [ -L "$entry" ]; then [ -n "${GONE[$entry]:-}" ] || return 1; fi
  done
}

# no_link_below BASE PATH: no component of PATH below BASE (PATH itself included) is a symbolic link.
no_link_below() {
  local base="$1" path="$2"
  while [ "${#path}" -gt "${#base}" ] && [ "$path" != / ]; do
    [ -L "$path" ] && return 1
    path="${path%/*}"
  done
  return 0
}

# remove_dir DIR: DIR (PREFIX-relative) once it is empty, unless other software shares it.
remove_dir() {
  local dir="$1" path="$ROOT$1"
  if [ ! -d "$path" ] || [ -L "$path" ] || shared_dir "$dir"; then return 0; fi
  # Below the prefix, never through a link (docs/packages -> elsewhere).
  [[ "$dir" != "$PREFIX"/* ]] || no_link_below "$ROOT$PREFIX" "$path" || return 0
  if ! empty_after "$path"; then say "keep $path (holds files install.sh did not write)"; return 0; fi
  changed=1
  GONE["$path"]=1
  say "remove $path/"
  run rmdir "$path"
}

# clear_cache: Node's compile cache, which Node alone writes: every entry is made again at the next start (an upgraded
# runtime or bundle would leave the old ones behind). Only the directory install.sh made, never through a link.
clear_cache() {
  local cache="$ROOT$CACHE_DIR/node"
  [ -d "$cache" ] && [ ! -L "$ROOT$CACHE_DIR" ] && [ ! -L "$cache" ] || return 0
  say "clear $cache/"
  GONE["$cache"]=1
  run rm -rf --one-file-system "$cache"
}

with_prefix() { sed "s#/opt/mc-tools#$PREFIX#g" "$1"; }

# MCOPS_SYSTEMCTL: a stand-in for systemctl, used even with --root (the deploy tests; leave it unset otherwise).
SYSTEMCTL="${MCOPS_SYSTEMCTL:-systemctl}"
have_systemd() {
  [ -n "${MCOPS_SYSTEMCTL:-}" ] && return 0
  [ -z "$ROOT" ] && command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]
}

# instances UNIT@.service: the instances of a template that systemd has loaded (running, failed or stopped).
instances() {
  "$SYSTEMCTL" list-units --all --plain --no-legend --full --type=service "${1%@.service}@*.service" 2>/dev/null |
    awk -v pre="${1%@.service}@" '{
      for (i = 1; i <= NF; i++) if (index($i, pre) == 1 && $i ~ /\.service$/ && $i != pre ".service") { print $i; break }
    }'
}

DEST="$ROOT$PREFIX"
UNITDIR="$ROOT/etc/systemd/system"
# An upgrade (the prefix holds an install): its version, for the last line.
if [ -f "$DEST/$MANIFEST_NAME" ] && [ ! -L "$DEST/$MANIFEST_NAME" ]; then
  while IFS= read -r rel; do [ -n "$rel" ] && OURS["$rel"]=1; done < "$DEST/$MANIFEST_NAME"
fi
PREVIOUS=""
# A VERSION file counts only when install.sh wrote it (in a shared prefix it may be someone else's).
if [ -f "$DEST/lib/backup.mjs" ]; then
  [ -n "${OURS[VERSION]:-}" ] && PREVIOUS="$(head -c 64 "$DEST/VERSION" | head -n 1 | tr -cd '[:alnum:]._+~-')"
  [ -n "$PREVIOUS" ] || PREVIOUS="an earlier version"
fi
VERSION_NOW="unknown"
if [ -f "$FILES/VERSION" ]; then VERSION_NOW="$(head -n 1 "$FILES/VERSION")"
elif [ -n "${REPO:-}" ]; then VERSION_NOW="$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$REPO/package.json")"; fi

# repository_dropin CONFIGDIR DROPIN: DROPIN allows the folder of CONFIGDIR/backup.env's RESTIC_REPOSITORY when it is
# on this disk (backup repository-folder says which); it is removed when the repository is elsewhere.
repository_dropin() {
  local configdir="$1" dropin="$2" folder errors
  # As backup reads the file: leading blanks and "export " are allowed.
  [ -f "$configdir/backup.env" ] && grep -Eq '^[[:space:]]*(export[[:space:]]+)?RESTIC_REPOSITORY=.' "$configdir/backup.env" ||
    return 0
  local with=(MCOPS_CONFIG_DIR="$configdir")
  [ -n "$ROOT" ] && [ -f "$ROOT/root/.config/rclone/rclone.conf" ] && with+=(RCLONE_CONFIG="$ROOT/root/.config/rclone/rclone.conf")
  # Only its standard output is the folder (a warning Node prints on stderr is not written into a unit file).
  errors="$(mktemp)"
  if ! folder="$(env "${with[@]}" "$RUNTIME" "$(tool_source backup)" repository-folder 2>"$errors")"; then
    say "note: $(tail -n 1 "$errors")"
    rm -f "$errors"
    return 0
  fi
  rm -f "$errors"
  if [ -z "$folder" ]; then
    remove "$dropin"
    return 0
  fi
  if [[ "$folder" == *$'\n'* ]]; then
    say "note: backup repository-folder said more than one folder; no drop-in written"
    return 0
  fi
  # The program root runs (cron, the units): never writable from the sandbox.
  if [[ "$folder/" == "$PREFIX/"* || "$PREFIX/" == "$folder/"* ]]; then
    say "note: the repository's folder $folder is not allowed to the idle monitor: it holds or is in $PREFIX — give the repository a folder of its own"
    return 0
  fi
  put_text "$dropin" 0644 <<EOF
# Written by install.sh from RESTIC_REPOSITORY in ${configdir#"$ROOT"}/backup.env: the repository is on this disk, and
# the backups the idle monitor starts run in its sandbox (ProtectSystem=strict). Run install.sh again when it moves.
[Service]
ReadWritePaths=-$folder
EOF
  [ -d "$ROOT$folder" ] || say "note: $folder does not exist yet: create the repository (backup init) before starting the idle monitor"
}

if [ "$UNINSTALL" = 1 ]; then
  for unit in "${UNITS[@]}"; do
    if [ -e "$UNITDIR/$unit" ] && have_systemd; then
      if [[ "$unit" == *@.service ]]; then
        # Every instance (log-tailer@<name>) runs from the prefix too: stop it. Disabling the template then removes
        # the enablement link of every instance, loaded or not.
        while read -r instance; do
          say "stop and disable $instance"
          run_quiet "$SYSTEMCTL" disable --now "$instance"
        done < <(instances "$unit")
        run_quiet "$SYSTEMCTL" disable "$unit"
      else
        say "stop and disable $unit"
        run_quiet "$SYSTEMCTL" disable --now "$unit"
      fi
    fi
    remove "$UNITDIR/$unit"
  done
  # The repository drop-ins install.sh wrote (the folders only once empty: the operator may keep their own there).
  for dropin in "$UNITDIR"/idle-monitor.service.d/repository.conf "$UNITDIR"/idle-monitor@*.service.d/repository.conf; do
    [ -f "$dropin" ] && grep -q '^# Written by install.sh' "$dropin" || continue
    remove "$dropin"
    remove_dir "$(dirname "${dropin#"$ROOT"}")"
  done
  # A unit that failed stays listed (not-found, failed) after its file is gone, until reset.
  if [ "$changed" = 1 ] && have_systemd; then
    run_quiet "$SYSTEMCTL" reset-failed log-tailer.service idle-monitor.service dashboard.service \
      'log-tailer@*.service' 'idle-monitor@*.service'
  fi
  remove "$ROOT/etc/cron.d/mc-backup"
  remove "$ROOT/etc/logrotate.d/mc-tools"
  hook="$ROOT/etc/letsencrypt/renewal-hooks/deploy/restart-wings.sh"
  if [ -f "$hook" ] && sed -n 2p "$hook" | grep -q '^# Installed by mcops'; then remove "$hook"; fi
  # The prefix may be shared (--prefix /usr/local): only the files this script writes there, each checked to be ours
  # where the name alone could be someone else's; then the directories, once empty.
  for tool in "${TOOLS[@]}"; do
    if [ -f "$DEST/$tool" ] && [ ! -L "$DEST/$tool" ] && sed -n 2p "$DEST/$tool" | grep -q "^# mcops $tool:"; then
      remove "$DEST/$tool"
    fi
    remove "$DEST/lib/$tool.mjs"
  done
  for pair in "${DROPINS[@]}"; do
    dropin="$DEST/${pair%%:*}"
    if [ -L "$dropin" ] && [ "$(readlink "$dropin")" = "${pair#*:}" ]; then remove "$dropin"; fi
  done
  if [ -f "$DEST/README.md" ] && grep -q mcops "$DEST/README.md"; then remove "$DEST/README.md"; fi
  remove "$DEST/runtime/node"
  remove "$DEST/nginx/mc-dashboard.conf"
  [ -n "${OURS[VERSION]:-}" ] && remove "$DEST/VERSION"
  # The documents install.sh wrote (its list) or this release ships, unchanged (the prefix may be shared), never through
  # a link on the way (docs/packages -> elsewhere); then their folders once empty.
  declare -A DOCS=()
  for rel in "${!OURS[@]}"; do [[ "$rel" != docs/* ]] || DOCS["$rel"]=1; done
  if [ -d "$FILES/docs" ]; then
    while IFS= read -r -d '' doc; do DOCS["${doc#"$FILES/"}"]=1; done < <(find "$FILES/docs" -type f -name '*.md' -print0)
  fi
  if [ -d "$DEST/docs" ] && [ ! -L "$DEST/docs" ]; then
    while IFS= read -r rel; do
      [ -n "$rel" ] && no_link_below "$DEST" "$(dirname "$DEST/$rel")" || continue
      [ -e "$DEST/$rel" ] || [ -L "$DEST/$rel" ] || continue
      if [ -z "${OURS[$rel]:-}" ] && ! cmp -s "$FILES/$rel" "$DEST/$rel"; then
        say "keep $DEST/$rel (not installed by mcops)"
        continue
      fi
      remove "$DEST/$rel"
    done < <(printf '%s\n' "${!DOCS[@]}" | sort)
    while IFS= read -r dir; do
      [ -n "$dir" ] && remove_dir "$PREFIX/$dir"
    done < <(for rel in "${!DOCS[@]}"; do d="${rel%/*}"; while [ "$d" != docs ] && [[ "$d" == docs/* ]]; do echo "$d"; d="${d%/*}"; done; done | sort -ru)
  fi
  [ -f "$DEST/$MANIFEST_NAME" ] && remove "$DEST/$MANIFEST_NAME"
  for dir in lib runtime nginx docs; do remove_dir "$PREFIX/$dir"; done
  clear_cache
  if [ -d "$ROOT$CACHE_DIR" ] && [ ! -L "$ROOT$CACHE_DIR" ]; then
    if empty_after "$ROOT$CACHE_DIR"; then
      changed=1
      say "remove $ROOT$CACHE_DIR/"
      run rmdir "$ROOT$CACHE_DIR"
    else
      say "keep $ROOT$CACHE_DIR (holds files install.sh did not write)"
    fi
  fi
  remove_dir "$PREFIX"
  if [ "$changed" = 1 ] && have_systemd; then run "$SYSTEMCTL" daemon-reload; fi
  say "kept: $ROOT/etc/mc-backup (config), /var/log/mc-*.log (logs), $ROOT/var/lib/mc-tools (state), the backups"
  exit 0
fi

[ -x "$RUNTIME" ] || { echo "install.sh: the Node runtime is missing ($RUNTIME) — use the release tarball, or run npm run build in the clone" >&2; exit 1; }
for tool in "${TOOLS[@]}"; do
  src="$(tool_source "$tool")"
  [ -f "$src" ] || { echo "install.sh: $src is missing — use the release tarball, or run npm run build in the clone" >&2; exit 1; }
done

# The program: a private Node runtime, one bundle per tool, a small launcher per tool, the drop-in names.
put "$RUNTIME" "$DEST/runtime/node" 0755
for tool in "${TOOLS[@]}"; do
  put "$(tool_source "$tool")" "$DEST/lib/$tool.mjs" 0644
  put_text "$DEST/$tool" 0755 <<EOF
#!/bin/sh
# mcops $tool: runs with the Node runtime installed beside it (the VM's own Node may be missing or too old).
# Only shell built-ins (and /bin/readlink for a link from elsewhere), so it runs whatever PATH is.
self=\$0
if [ -L "\$self" ]; then self=\$(/bin/readlink -f "\$self"); fi
here=\${self%/*}
# Node's compile cache, in the directory install.sh made for it (root's, 0700): a start after the first skips
# compiling the bundle. Without the directory (a user who cannot enter it, a unit whose /var is read-only), Node
# goes on without it and says nothing.
if [ -d $CACHE_DIR ] && [ ! -L $CACHE_DIR ]; then NODE_COMPILE_CACHE=$CACHE_DIR/node; export NODE_COMPILE_CACHE; fi
# A unit's Node flags (MCOPS_NODE_FLAGS, e.g. the log tailer's --lite-mode): for this process only, not for the
# programs it starts.
flags=\${MCOPS_NODE_FLAGS-}
unset MCOPS_NODE_FLAGS
set -f
exec "\$here/runtime/node" \$flags "\$here/lib/$tool.mjs" "\$@"
EOF
done
for pair in "${DROPINS[@]}"; do link "${pair#*:}" "$DEST/${pair%%:*}"; done
if [ -L "$ROOT$CACHE_DIR" ] || { [ -e "$ROOT$CACHE_DIR" ] && [ ! -d "$ROOT$CACHE_DIR" ]; }; then
  # Not made by install.sh: left as it is, and the launchers run without a cache when it is no directory.
  say "keep $ROOT$CACHE_DIR (not a directory install.sh made: Node's compile cache is not used)"
elif [ ! -d "$ROOT$CACHE_DIR" ]; then
  changed=1
  say "make $ROOT$CACHE_DIR/ (Node's compile cache)"
  run mkdir -p -m 0700 "$ROOT$CACHE_DIR"
fi
[ -f "$FILES/README.md" ] && put "$FILES/README.md" "$DEST/README.md" 0644
# The documents the tools' messages cite (docs/system.md 2.1, a tool's README), and the version, for upgrades.
if [ -d "$FILES/docs" ]; then
  while IFS= read -r -d '' doc; do put_ours "$doc" "${doc#"$FILES/"}" 0644; done < <(find "$FILES/docs" -type f -name '*.md' -print0 | sort -z)
fi
version_file="$(mktemp)"
echo "$VERSION_NOW" > "$version_file"
put_ours "$version_file" VERSION 0644
rm -f "$version_file"
# What of those install.sh wrote, and an earlier install that this one did not write again (--uninstall takes them).
for rel in "${!OURS[@]}"; do [ ! -e "$DEST/$rel" ] || SHIPPED+=("$rel"); done
put_text "$DEST/$MANIFEST_NAME" 0644 < <(printf '%s\n' "${SHIPPED[@]}" | sort -u)
[ -f "$FILES/nginx/mc-dashboard.conf" ] && put "$FILES/nginx/mc-dashboard.conf" "$DEST/nginx/mc-dashboard.conf" 0644

# systemd units (paths follow --prefix), cron, logrotate.
program_changed=$changed
# A new bundle or runtime: the compile cache starts afresh.
[ "$program_changed" = 1 ] && clear_cache
changed=0
for unit in "${UNITS[@]}"; do
  [ -f "$FILES/systemd/$unit" ] || continue
  # Not a pipeline: put_text would run in a subshell, and its changed=1 (daemon-reload, try-restart) would be lost.
  put_text "$UNITDIR/$unit" 0644 < <(with_prefix "$FILES/systemd/$unit")
done
# The idle monitor's units may write only what they list (ProtectSystem=strict); the backups they start write the
# repository, so a repository on this disk is allowed by a drop-in, read from each server's backup.env.
repository_dropin "$ROOT/etc/mc-backup" "$UNITDIR/idle-monitor.service.d/repository.conf"
for envdir in "$ROOT"/etc/mc-backup/*/; do
  name="$(basename "$envdir")"
  [ -f "$envdir/backup.env" ] && [[ "$name" =~ ^[A-Za-z0-9_.-]+$ ]] || continue
  repository_dropin "${envdir%/}" "$UNITDIR/idle-monitor@$name.service.d/repository.conf"
done
units_changed=$changed
[ "$program_changed" = 1 ] && changed=1
# The cron file as shipped (paths follow --prefix), with and without the restart line: either is install.sh's own.
cron="$(mktemp)" cron_other="$(mktemp)"
with_prefix "$FILES/cron.d/mc-backup" > "$cron"
sed 's/^#\(55 4,10,16,22 .*\)$/\1/' "$cron" > "$cron_other"
if [ "$WITH_RESTART" = 1 ]; then cp "$cron_other" "$cron" && with_prefix "$FILES/cron.d/mc-backup" > "$cron_other"; fi
config "$cron" "$ROOT/etc/cron.d/mc-backup" 0644 "cron.d/mc-backup in the release" "$cron_other"
add_drill "$cron" "$ROOT/etc/cron.d/mc-backup"
rm -f "$cron" "$cron_other"
put "$FILES/logrotate.d/mc-tools" "$ROOT/etc/logrotate.d/mc-tools" 0644

# Config templates, mode 600, never overwritten.
config "$FILES/env/backup.env" "$ROOT/etc/mc-backup/backup.env" 0600
config "$FILES/env/webhook.env" "$ROOT/etc/mc-backup/webhook.env" 0600
if [ "$(stat -c %a "$ROOT/etc/mc-backup" 2>/dev/null || echo 700)" != 700 ] && [ "$DRY" = 0 ]; then chmod 700 "$ROOT/etc/mc-backup"; fi

# PaperMC asks every client for a contact in its User-Agent; jar-download --type paper|folia asks nothing without it.
envfile="$ROOT/etc/mc-backup/backup.env"
# A dry run plans on the template when backup.env is not there yet (it would be created above).
envplan="$envfile"
[ "$DRY" = 1 ] && [ ! -f "$envfile" ] && envplan="$FILES/env/backup.env"
if [ -f "$envplan" ] && ! grep -q '^DOWNLOAD_CONTACT=.' "$envplan"; then
  if [ -z "$DOWNLOAD_CONTACT" ] && [ "$DRY" = 0 ] && [ -t 0 ] && [ -t 1 ]; then
    read -r -p "Your e-mail or web address for PaperMC's downloads (jar-download sends it; empty to skip): " \
      DOWNLOAD_CONTACT || DOWNLOAD_CONTACT=""
  fi
  if [ -n "$DOWNLOAD_CONTACT" ]; then
    check_contact
    changed=1
    say "add DOWNLOAD_CONTACT=$DOWNLOAD_CONTACT to $envfile"
    [ "$DRY" = 1 ] || printf 'DOWNLOAD_CONTACT=%s\n' "$DOWNLOAD_CONTACT" >> "$envfile"
  else
    say "next: add DOWNLOAD_CONTACT=<your e-mail or web address> to $envfile (PaperMC asks every client for one)"
  fi
fi

# The repository password.
password="$ROOT/root/.restic-password"
if [ ! -e "$password" ]; then
  answer=n
  if [ "$CREATE_PASSWORD" = 1 ]; then
    answer=y
  elif [ "$DRY" = 0 ] && [ -t 0 ] && [ -t 1 ]; then
    read -r -p "Create $password with a random password (keep a copy somewhere safe)? [y/N] " answer || answer=n
  fi
  if [ "$answer" = y ] || [ "$answer" = Y ]; then
    changed=1
    say "create $password (mode 600, random)"
    if [ "$DRY" = 0 ]; then
      mkdir -p "$(dirname "$password")"
      (umask 077; head -c 32 /dev/urandom | base64 > "$password")
    fi
  else
    say "next: create the repository password: install -m 600 /dev/null $password && openssl rand -base64 32 > $password"
  fi
fi

# Where certbot is set up (Wings' certificate): the deploy hook that restarts Wings after a renewal (docs/system.md 5),
# written by certs wings-hook into a scratch folder and installed like any other file (said, counted, dry-run aware).
# A hook of that name that is not ours (its second line says so) is the operator's, and is kept.
hook="$ROOT/etc/letsencrypt/renewal-hooks/deploy/restart-wings.sh"
if [ -d "$ROOT/etc/letsencrypt" ]; then
  if [ -e "$hook" ] && ! sed -n 2p "$hook" | grep -q '^# Installed by mcops'; then
    say "keep $hook (yours; mcops's hook is not installed: see certs wings-hook --help)"
  else
    hooks="$(mktemp -d)"
    "$RUNTIME" "$(tool_source certs)" wings-hook --hooks-dir "$hooks" --prefix "$PREFIX" >/dev/null
    put "$hooks/restart-wings.sh" "$hook" 0755
    rm -rf "$hooks"
  fi
fi

if [ "$units_changed" = 1 ] && have_systemd; then run "$SYSTEMCTL" daemon-reload; fi
# An upgrade: the services that run go on with the new program (try-restart leaves stopped ones stopped). The idle
# monitor stops a backup it started the way backup handles SIGTERM (autosave back on) and backs up again when due.
if { [ "$program_changed" = 1 ] || [ "$units_changed" = 1 ]; } && have_systemd; then
  say "restart the running services with the new program"
  run "$SYSTEMCTL" try-restart log-tailer.service idle-monitor.service dashboard.service \
    'log-tailer@*.service' 'idle-monitor@*.service'
fi

missing=()
for need in restic rclone; do command -v "$need" >/dev/null 2>&1 || missing+=("$need"); done
[ ${#missing[@]} -eq 0 ] || say "note: backup needs ${missing[*]}: apt-get install ${missing[*]}"

if [ "$changed" = 0 ]; then
  say "mcops $VERSION_NOW is installed in $DEST; nothing changed"
elif [ -n "$PREVIOUS" ]; then
  if [ "$PREVIOUS" = "$VERSION_NOW" ]; then say "mcops $VERSION_NOW in $DEST: brought up to date"
  else say "mcops upgraded in $DEST: $PREVIOUS -> $VERSION_NOW"; fi
else
  say "mcops installed in $DEST. Next: fill in $ROOT/etc/mc-backup/backup.env and webhook.env, run this install.sh"
  say "  again (a repository on this disk is then allowed to the idle monitor), backup init, then"
  say "  systemctl enable --now log-tailer idle-monitor   (and: dashboard passwd; see $PREFIX/README.md)"
fi

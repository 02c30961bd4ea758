#!/usr/bin/env bash
# Prints the URL of the Debian archive apt already uses on this machine, for a suite (default: this machine's own,
# VERSION_CODENAME in /etc/os-release): the first enabled `deb` entry naming that suite that is not the security
# archive, from the deb822 files in /etc/apt/sources.list.d (*.sources), then the one-line /etc/apt/sources.list and
# sources.list.d/*.list. Only when apt's own configuration names none: http://deb.debian.org/debian.
# Set-up's restic-versions.sh fetches the older and newer releases' packages from the same archive.
set -euo pipefail

suite=${1:-$(sed -n 's/^VERSION_CODENAME=//p' /etc/os-release 2>/dev/null | tr -d '"' | head -n 1)}
[ -n "$suite" ] || suite=bookworm

etc=${MCOPS_APT_ETC:-/etc/apt}
shopt -s nullglob
deb822=("$etc"/sources.list.d/*.sources)
oneline=()
[ -f "$etc/sources.list" ] && oneline+=("$etc/sources.list")
oneline+=("$etc"/sources.list.d/*.list)

found=""
if [ ${#deb822[@]} -gt 0 ]; then
  # One stanza per paragraph; a field may go on over lines that start with a space; # starts a comment line.
  found=$(awk -v suite="$suite" '
    function field(name,   v) { v = fields[name]; gsub(/^[ \t]+|[ \t]+$/, "", v); return v }
    function done_stanza(   n, i, types, uris, suites, ok) {
      if (found || tolower(field("enabled")) == "no") return
      n = split(field("types"), types, /[ \t]+/); ok = 0
      for (i = 1; i <= n; i++) if (types[i] == "deb") ok = 1
      if (!ok) return
      n = split(field("suites"), suites, /[ \t]+/); ok = 0
      for (i = 1; i <= n; i++) if (suites[i] == suite) ok = 1
      if (!ok) return
      n = split(field("uris"), uris, /[ \t]+/)
      for (i = 1; i <= n; i++) if (uris[i] != "" && uris[i] !~ /security/) { print uris[i]; found = 1; return }
    }
    /^[ \t]*$/ { done_stanza(); split("", fields); key = ""; next }
    /^#/ { next }
    /^[ \t]/ { if (key != "") fields[key] = fields[key] " " $0; next }
    {
      key = tolower(substr($0, 1, index($0, ":") - 1))
      fields[key] = substr($0, index($0, ":") + 1)
    }
    END { done_stanza() }
  ' < <(for file in "${deb822[@]}"; do cat "$file" && echo; done) 2>/dev/null || true)
fi
if [ -z "$found" ] && [ ${#oneline[@]} -gt 0 ]; then
  # deb [options] URI SUITE COMPONENT...
  found=$(sed -n 's/^[ \t]*deb[ \t]\+\(\[[^]]*\][ \t]\+\)\{0,1\}\([^ \t]\+\)[ \t]\+\([^ \t]\+\).*/\2 \3/p' "${oneline[@]}" |
    awk -v suite="$suite" '$2 == suite && $1 !~ /security/ { print $1; exit }')
fi
echo "${found:-http://deb.debian.org/debian}"

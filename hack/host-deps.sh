#!/usr/bin/env bash
# The host's Debian packages (hack/host-packages.txt), in one place for every README command.
#
#   hack/host-deps.sh install   apt-get install what is not installed (one `apt-get update` first)
#   hack/host-deps.sh check     exit 1 naming each package whose probe (command or file) is absent
#   hack/host-deps.sh packages  print the package names
#
# HOST_PACKAGES=FILE reads another list (the dependency test uses that).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
list=${HOST_PACKAGES:-$here/host-packages.txt}

entries() { sed -e 's/#.*//' "$list" | awk 'NF >= 2 {print $1, $2}'; }

probe_ok() { # PROBE
  case $1 in
    cmd:*) command -v "${1#cmd:}" >/dev/null ;;
    file:*) [ -e "${1#file:}" ] ;;
    *) echo "host-deps: bad probe '$1' in $list" >&2; return 2 ;;
  esac
}

installed() { [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]; }

case "${1:-}" in
  packages) entries | cut -d' ' -f1 ;;
  check)
    bad=()
    while read -r pkg probe; do probe_ok "$probe" || bad+=("$pkg (${probe#*:})"); done < <(entries)
    if [ ${#bad[@]} -gt 0 ]; then
      echo "host-deps: missing: ${bad[*]}; run: hack/host-deps.sh install" >&2
      exit 1
    fi
    ;;
  install)
    missing=()
    while read -r pkg _; do installed "$pkg" || missing+=("$pkg"); done < <(entries)
    if [ ${#missing[@]} -gt 0 ]; then
      [ "$(id -u)" = 0 ] || { echo "host-deps: need root to install: ${missing[*]}" >&2; exit 1; }
      echo "host-deps: installing ${missing[*]}" >&2
      apt-get update -qq
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    fi
    "$0" check
    ;;
  *) echo "usage: $0 install|check|packages" >&2; exit 2 ;;
esac

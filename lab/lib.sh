# Shared helpers for lab/*.sh. Sourced, not executed.
# shellcheck shell=bash
LAB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(cd "$LAB_DIR/.." && pwd)
# shellcheck source=hack/deps.sh
. "$REPO_DIR/hack/deps.sh"
set -a
# shellcheck source=/dev/null
. "$REPO_DIR/hack/versions.env"
# shellcheck source=/dev/null
. "$LAB_DIR/versions.env"
set +a
export GOTOOLCHAIN
CACHE=${SKEWSAFE_CACHE:-$HOME/.cache/skewsafe}
LAB_CACHE=$CACHE/lab
# Runtime state of the own dockerd (sockets, data-root); removed by lab/down.sh.
LAB_STATE=${LAB_STATE:-$LAB_CACHE/run}
DOCKER_SOCK=$LAB_STATE/docker.sock
# Debian's docker 20.10 client; the 28.x client in /usr/local/bin also works (API negotiation).
DOCKER_BIN=${DOCKER_BIN:-/usr/bin/docker}

log() { printf '[%s %s] %s\n' "$(basename "$0" .sh)" "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
ldocker() { "$DOCKER_BIN" -H "unix://$DOCKER_SOCK" "$@"; }

# kubeadm's constants for one Kubernetes version (read from the module cache).
kubeadm_const() { # VERSION NAME
  local f
  f="$(go env GOMODCACHE)/k8s.io/kubernetes@v$1/cmd/kubeadm/app/constants/constants.go"
  [ -f "$f" ] || go mod download "k8s.io/kubernetes@v$1" >/dev/null
  sed -n "s/^\s*$2 = \"\([^\"]*\)\"/\1/p" "$f"
}
k8s_bin() { echo "$CACHE/k8s/v$1/bin"; }

# The host's Debian mirror (deb822 sources), e.g. http://deb.debian.org/debian.
debian_mirror() {
  local m
  m=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
  [ -n "$m" ] || m=$(awk '/^deb / {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
  echo "${m:-http://deb.debian.org/debian}"
}

# debootstrap_tar OUT.tar PKGS(comma list) [SUITE]: minbase rootfs as an uncompressed tar,
# cached (OUT exists -> nothing to do). .debs are kept in $LAB_CACHE/debs/<suite> for reuse.
debootstrap_tar() {
  local out=$1 pkgs=$2 suite=${3:-$NODE_SUITE} root t0=$SECONDS
  [ -f "$out" ] && return 0
  need cmd:debootstrap "apt-get install -y debootstrap"
  root=$(mktemp -d "$LAB_CACHE/rootfs.XXXXXX")
  mkdir -p "$LAB_CACHE/debs/$suite"
  log "debootstrap $suite ($pkgs) ..."
  debootstrap --variant=minbase --cache-dir="$LAB_CACHE/debs/$suite" ${pkgs:+--include="$pkgs"} \
    "$suite" "$root" "$(debian_mirror)" >"$root.log" 2>&1 || { tail -20 "$root.log" >&2; rm -rf "$root"; die "debootstrap failed"; }
  chroot "$root" apt-get clean
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/log/*.log "$root"/var/cache/debconf/*-old
  tar -C "$root" --numeric-owner --xattrs --xattrs-include='security.capability' -cf "$out.tmp" .
  mv "$out.tmp" "$out"; rm -rf "$root" "$root.log"
  log "debootstrap $suite: $(du -h "$out" | cut -f1) in $((SECONDS - t0))s -> $out"
}

# lab_lock NAME: serialise concurrent runs of one build script (fd 9, released on exit)
lab_lock() {
  mkdir -p "$LAB_CACHE"
  exec 9>"$LAB_CACHE/.$1.lock"
  flock 9
}

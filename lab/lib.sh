# Shared helpers for lab/*.sh. Sourced, not executed.
# shellcheck shell=bash
LAB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(cd "$LAB_DIR/.." && pwd)
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

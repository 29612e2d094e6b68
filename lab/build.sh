#!/usr/bin/env bash
# Everything the lab builds before a node starts, cached (a second run only checks): the node runtime
# (build-deps), the control-plane images (build-images), the .deb packages and their repository (build-debs)
# and the node image tarball (build-node-image). Needs the upstream binaries (hack/build-upstream.sh) and no
# dockerd: lab/up.sh loads the node image once its dockerd runs.
#   lab/build.sh [K8S_VERSION ...]   default K8S_OLD_VERSION K8S_NEW_VERSION
# `make test` runs it in the background beside the integration tier, so an empty machine builds the lab while
# the harness tests mostly wait (hack/test.sh, lab_prebuild).
set -euo pipefail
# shellcheck source=lab/lib.sh
. "$(dirname "$0")/lib.sh"
[ $# -gt 0 ] || set -- "$K8S_OLD_VERSION" "$K8S_NEW_VERSION"
t0=$SECONDS
step() { local t=$SECONDS; "$@"; log "$(basename "$1" .sh): $((SECONDS - t))s"; }
step "$LAB_DIR/build-deps.sh" "$@"
step "$LAB_DIR/build-images.sh" "$@"
step "$LAB_DIR/build-debs.sh" "$@"
step "$LAB_DIR/build-node-image.sh" >/dev/null
log "lab builds for $*: $((SECONDS - t0))s"

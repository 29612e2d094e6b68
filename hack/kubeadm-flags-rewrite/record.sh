#!/usr/bin/env bash
# Records what kubeadm's own upgrade code (WriteKubeletConfigFiles of k8s.io/kubernetes at VERSION) writes in place
# of each kubeadm-flags.env under tests/unit/plugins/plugin_utils/fixtures/kubeadm-flags/ on a node without
# instance-config.yaml; the unit tests replay it against the collection's model (plugin_utils/_kubelet_flags.py).
# Needs the build module hack/build-upstream.sh leaves in the cache for VERSION (make k8s-bins).
set -euo pipefail
VERSION=${VERSION:-1.36.5}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
src=${SKEWSAFE_CACHE:-$HOME/.cache/skewsafe}/src/kubernetes-v$VERSION
[ -f "$src/go.mod" ] || { echo "no build module at $src: run make k8s-bins first" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$src/go.mod" "$src/go.sum" "$here/main.go" "$work/"
sed -i 's#^module .*#module skewsafe.invalid/kubeadm-flags-rewrite#' "$work/go.mod"
(cd "$work" && GOFLAGS=-mod=mod go build -o rewrite .)
cases="$root/tests/unit/plugins/plugin_utils/fixtures/kubeadm-flags"
(cd "$cases/in" && "$work/rewrite" ./*) 2>/dev/null | grep -v '^\[kubelet-start\]' >"$cases/kubeadm-v$VERSION.txt"
echo "wrote $cases/kubeadm-v$VERSION.txt"

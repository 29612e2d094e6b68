#!/usr/bin/env bash
# Import kubeadm's images into a node's containerd (k8s.io namespace), for one or more versions:
#   lab/load-images.sh [--worker] NODE [K8S_VERSION ...]   (default K8S_OLD_VERSION; run lab/build-images.sh first)
# --worker: only what a worker runs (pause, kube-proxy, coredns if built).
# The lab has no registry: every image kubelet or `kubeadm upgrade` will want must be here
# before (lab/up.sh loads both pinned versions, so the upgrade to K8S_NEW_VERSION pulls nothing).
set -euo pipefail
# shellcheck source=lab/lib.sh
. "$(dirname "$0")/lib.sh"
worker=0; [ "${1:-}" = --worker ] && { worker=1; shift; }
node=${1:?usage: load-images.sh [--worker] NODE [K8S_VERSION ...]}; shift
versions=("$@"); [ ${#versions[@]} -gt 0 ] || versions=("$K8S_OLD_VERSION")
t0=$SECONDS
# ctr prints a cgroup v1 deprecation warning on every call: drop it
have=$(ldocker exec "$node" ctr -n k8s.io images ls -q 2>/dev/null)
pids=() n=0
for kv in "${versions[@]}"; do
  list=$LAB_CACHE/images/v$kv.list
  [ -f "$list" ] || die "$list missing: run lab/build-images.sh $kv"
  while read -r ref file; do
    if grep -qxF "$ref" <<<"$have"; then continue; fi
    if [ $worker = 1 ] && [[ ! $ref =~ /(pause|kube-proxy|coredns/coredns): ]]; then continue; fi
    have+=$'\n'"$ref"   # the same pause tag is in both versions' lists
    n=$((n + 1))
    # parallel imports: the node's containerd unpacks them concurrently
    ( ldocker exec "$node" ctr -n k8s.io images import "/lab/images/$(basename "$file")" 2>&1 >/dev/null \
        | grep -v 'DEPRECATION: The support for cgroup v1' >&2 || true
      now=$(ldocker exec "$node" ctr -n k8s.io images ls -q 2>/dev/null)   # no grep -q in a pipe: SIGPIPE + pipefail
      grep -qxF "$ref" <<<"$now" || die "$node: import of $ref failed" ) &
    pids+=($!)
  done <"$list"
done
rc=0; for p in "${pids[@]}"; do wait "$p" || rc=1; done
[ $rc = 0 ] || die "$node: some imports failed"
log "$node: images of v${versions[*]} present$([ $worker = 1 ] && echo ' (worker set)'), $n imported in $((SECONDS - t0))s"

#!/usr/bin/env bash
# Import kubeadm's images for one Kubernetes version into a node's containerd (k8s.io namespace):
#   lab/load-images.sh NODE [K8S_VERSION]     (default K8S_OLD_VERSION; run lab/build-images.sh first)
set -euo pipefail
# shellcheck source=lab/lib.sh
. "$(dirname "$0")/lib.sh"
node=${1:?usage: load-images.sh NODE [K8S_VERSION]} kv=${2:-$K8S_OLD_VERSION}
list=$LAB_CACHE/images/v$kv.list
[ -f "$list" ] || die "$list missing: run lab/build-images.sh $kv"
t0=$SECONDS
have=$(ldocker exec "$node" ctr -n k8s.io images ls -q)
while read -r ref file; do
  if grep -qxF "$ref" <<<"$have"; then continue; fi
  ldocker exec "$node" ctr -n k8s.io images import "/lab/images/$(basename "$file")" >/dev/null
  log "$node: imported $ref"
done <"$list"
log "$node: images of v$kv present ($((SECONDS - t0))s)"

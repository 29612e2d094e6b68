#!/usr/bin/env bash
# Static pod network, kindnet-style but without a daemon: for every registered node
#   - /etc/cni/net.d/10-sslab.conflist: bridge cni0 + host-local IPAM on the node's podCIDR + portmap
#   - routes to every other node's podCIDR via that node's InternalIP, kept in /etc/lab-pod-routes
#     and re-applied before every kubelet start (kubelet drop-in 20-lab-pod-routes.conf), so they
#     survive a kubelet restart and a container restart
#   lab/cni.sh CP_NODE       (a container with /etc/kubernetes/admin.conf)
# Re-run after nodes join (lab/up.sh does). Idempotent.
set -euo pipefail
# shellcheck source=lab/lib.sh
. "$(dirname "$0")/lib.sh"
cp=${1:?usage: cni.sh CP_NODE}
kc() { ldocker exec "$cp" kubectl --kubeconfig /etc/kubernetes/admin.conf "$@"; }

for _ in $(seq 60); do
  rows=$(kc get nodes -o jsonpath='{range .items[*]}{.metadata.name} {.spec.podCIDR} {.status.addresses[?(@.type=="InternalIP")].address}{"\n"}{end}' 2>/dev/null || true)
  # wait until every node has a podCIDR (kube-controller-manager allocates it)
  if [ -n "$rows" ] && ! awk 'NF<3 {exit 1}' <<<"$rows"; then sleep 1; continue; fi
  [ -n "$rows" ] && break; sleep 1
done
[ -n "$rows" ] || die "no nodes with podCIDR from $cp"
while read -r name cidr _; do
  [ -n "$cidr" ] || die "$name has no podCIDR (is kube-controller-manager running with --allocate-node-cidrs?)"
  ldocker exec -i "$name" tee "/etc/cni/net.d/10-$LAB_NAME.conflist" >/dev/null <<EOF
{
  "cniVersion": "1.0.0",
  "name": "$LAB_NAME",
  "plugins": [
    {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": "$cidr"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF
  # routes to the other nodes' podCIDRs: recorded in /etc/lab-pod-routes and applied by
  # lab-pod-routes (node image), which also runs before every kubelet start
  awk -v me="$name" '$1 != me {print $2, $3}' <<<"$rows" | ldocker exec -i "$name" tee /etc/lab-pod-routes >/dev/null
  ldocker exec "$name" /usr/local/sbin/lab-pod-routes
  log "$name: podCIDR $cidr"
done <<<"$rows"

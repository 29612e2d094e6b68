#!/usr/bin/env bash
# Join a node as an additional control plane (kubeadm join --control-plane, certificate key) or
# as a worker, through the HA endpoint, with the join material lab/kubeadm-init.sh left in
# $LAB_STATE/join.env:
#   lab/kubeadm-join.sh NODE IP [control-plane|worker]      (default control-plane)
# Idempotent: skips when /etc/kubernetes/kubelet.conf already exists.
set -euo pipefail
# shellcheck source=lab/lib.sh
. "$(dirname "$0")/lib.sh"
node=${1:?usage: kubeadm-join.sh NODE IP [control-plane|worker]} ip=${2:?} role=${3:-control-plane}
case "$role" in control-plane|worker) ;; *) die "role must be control-plane or worker, not $role" ;; esac
# shellcheck source=/dev/null
. "$LAB_STATE/join.env"

ldocker exec -i "$node" tee /root/kubeadm-join.yaml >/dev/null <<EOF
apiVersion: kubeadm.k8s.io/v1beta4
kind: JoinConfiguration
discovery:
  bootstrapToken:
    apiServerEndpoint: "$JOIN_ENDPOINT"
    token: "$JOIN_TOKEN"
    caCertHashes: ["$JOIN_CA_HASH"]
nodeRegistration:
  name: $node
  criSocket: unix:///run/containerd/containerd.sock
  kubeletExtraArgs:
    - {name: node-ip, value: "$ip"}
  ignorePreflightErrors: [SystemVerification]
EOF
[ "$role" = worker ] || ldocker exec -i "$node" tee -a /root/kubeadm-join.yaml >/dev/null <<EOF
controlPlane:
  localAPIEndpoint:
    advertiseAddress: "$ip"
    bindPort: 6443
  certificateKey: "$JOIN_CERT_KEY"
EOF
ldocker exec "$node" sh -c "mkdir -p /etc/kubernetes && printf 'nameserver $LAB_GATEWAY\noptions ndots:5\n' >/etc/kubernetes/pod-resolv.conf"
if ldocker exec "$node" test -f /etc/kubernetes/kubelet.conf; then
  log "$node: already joined"
else
  t0=$SECONDS
  ldocker exec "$node" kubeadm join --config /root/kubeadm-join.yaml 2>&1 | tee "$LAB_STATE/kubeadm-join-$node.log" >&2
  [ "${PIPESTATUS[0]}" = 0 ] || die "kubeadm join failed, log in $LAB_STATE/kubeadm-join-$node.log"
  log "$node: kubeadm join ($role) took $((SECONDS - t0))s"
fi

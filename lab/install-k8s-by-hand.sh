#!/usr/bin/env bash
# FEASIBILITY ONLY (the real path is .deb packages): copy kubelet/kubeadm/kubectl into a node
# and install the kubelet unit + 10-kubeadm.conf drop-in as the upstream deb does.
#   lab/install-k8s-by-hand.sh NODE [K8S_VERSION]
set -euo pipefail
# shellcheck source=lab/lib.sh
. "$(dirname "$0")/lib.sh"
node=${1:?usage: install-k8s-by-hand.sh NODE [K8S_VERSION]} kv=${2:-$K8S_OLD_VERSION}
[ -x "$(k8s_bin "$kv")/kubelet" ] || die "no kubelet v$kv: run hack/build-upstream.sh $kv"
ldocker exec -i "$node" bash -euo pipefail -s "$kv" <<'IN'
kv=$1
for b in kubelet kubeadm kubectl; do install -m 0755 /lab/k8s/v$kv/bin/$b /usr/bin/$b; done
mkdir -p /usr/lib/systemd/system/kubelet.service.d /etc/kubernetes/manifests /var/lib/kubelet
cat >/usr/lib/systemd/system/kubelet.service <<'U'
[Unit]
Description=kubelet: The Kubernetes Node Agent
Documentation=https://kubernetes.io/docs/
Wants=network-online.target
After=network-online.target

[Service]
ExecStart=/usr/bin/kubelet
Restart=always
StartLimitInterval=0
RestartSec=10

[Install]
WantedBy=multi-user.target
U
cat >/usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf <<'U'
# Note: This dropin only works with kubeadm and kubelet v1.11+
[Service]
Environment="KUBELET_KUBECONFIG_ARGS=--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf --kubeconfig=/etc/kubernetes/kubelet.conf"
Environment="KUBELET_CONFIG_ARGS=--config=/var/lib/kubelet/config.yaml"
# This is a file that "kubeadm init" and "kubeadm join" generates at runtime, populating the KUBELET_KUBEADM_ARGS variable dynamically
EnvironmentFile=-/var/lib/kubelet/kubeadm-flags.env
# This is a file that the user can use for overrides of the kubelet args as a last resort. Preferably, the user should use
# the .NodeRegistration.KubeletExtraArgs object in the configuration files instead. KUBELET_EXTRA_ARGS should be sourced from this file.
EnvironmentFile=-/etc/default/kubelet
ExecStart=
ExecStart=/usr/bin/kubelet $KUBELET_KUBECONFIG_ARGS $KUBELET_CONFIG_ARGS $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS
U
systemctl daemon-reload
systemctl enable kubelet >/dev/null 2>&1
IN
log "$node: kubelet/kubeadm/kubectl v$kv installed by hand ($(ldocker exec "$node" kubeadm version -o short))"

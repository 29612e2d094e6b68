#!/usr/bin/env bash
# kubeadm init on one node with the settings this cgroup-v1 VM needs, then the bridge CNI:
#   lab/kubeadm-init.sh NODE IP [K8S_VERSION]
# controlPlaneEndpoint = $CONTROL_PLANE_ENDPOINT (default the LB, $LAB_LB_IP:6443: run lab/lb.sh first).
# Writes /root/kubeadm.yaml in the node (v1beta4) and runs kubeadm init with it; prints the
# join material (token, CA hash, certificate key) to $LAB_STATE/join.env for lab/kubeadm-join.sh.
# Idempotent: skips init when /etc/kubernetes/admin.conf already exists.
set -euo pipefail
# shellcheck source=lab/lib.sh
. "$(dirname "$0")/lib.sh"
node=${1:?usage: kubeadm-init.sh NODE IP [K8S_VERSION]} ip=${2:?} kv=${3:-$K8S_OLD_VERSION}

endpoint=${CONTROL_PLANE_ENDPOINT:-$LAB_LB_IP:6443}
# CoreDNS is on (lab/build-deps.sh and lab/build-images.sh build it from its Go module); BUILD_COREDNS=0
# sets v1beta4 `dns.disabled`, which keeps both `kubeadm init` and `kubeadm upgrade apply` from
# deploying or upgrading it (it is stored in the kubeadm-config ConfigMap).
dns_disabled=true
if [ "${BUILD_COREDNS:-1}" = 1 ]; then
  dns_disabled=false
  grep -q '/coredns/' "$LAB_CACHE/images/v$kv.list" || die "no CoreDNS image for v$kv: lab/build-images.sh $kv (or BUILD_COREDNS=0 for a lab without it)"
fi

# LAB_ETCD_ENDPOINTS (lab/etcd-external.sh): etcd outside the control planes, as kubeadm's etcd.external
# (its client certificate and CA are on every control plane already); unset: kubeadm's stacked etcd.
etcd_config=
if [ -n "${LAB_ETCD_ENDPOINTS:-}" ]; then
  etcd_config=$(printf '%s\n' "etcd:" "  external:" "    endpoints: [\"$LAB_ETCD_ENDPOINTS\"]" \
    "    caFile: /etc/kubernetes/pki/etcd/ca.crt" \
    "    certFile: /etc/kubernetes/pki/apiserver-etcd-client.crt" \
    "    keyFile: /etc/kubernetes/pki/apiserver-etcd-client.key")
fi

ldocker exec -i "$node" tee /root/kubeadm.yaml >/dev/null <<EOF
apiVersion: kubeadm.k8s.io/v1beta4
kind: InitConfiguration
localAPIEndpoint:
  advertiseAddress: $ip
  bindPort: 6443
nodeRegistration:
  name: $node
  criSocket: unix:///run/containerd/containerd.sock
  kubeletExtraArgs:
    - {name: node-ip, value: "$ip"}
  # cgroup v1 host: the SystemVerification preflight reports it as an error
  ignorePreflightErrors: [SystemVerification]
---
apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
kubernetesVersion: v$kv
clusterName: $LAB_NAME
imageRepository: registry.k8s.io
# the HA endpoint (lab/lb.sh); kubeadm puts it into every kubeconfig and the apiserver SANs
controlPlaneEndpoint: "$endpoint"
dns:
  disabled: $dns_disabled
$etcd_config
networking:
  podSubnet: $POD_SUBNET
  serviceSubnet: $SERVICE_SUBNET
apiServer:
  certSANs: [localhost, 127.0.0.1, "$ip", "${endpoint%:*}"]
---
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: systemd
# kubelet 1.35+ refuses cgroup v1 unless told otherwise; this VM cannot have v2
failCgroupV1: false
# nodes share the host disk: never evict for disk pressure (as kind)
evictionHard: {nodefs.available: "0%", nodefs.inodesFree: "0%", imagefs.available: "0%"}
imageGCHighThresholdPercent: 100
# docker's embedded DNS (127.0.0.11) is not reachable from pods; nodes have no DNS upstream
resolvConf: /etc/kubernetes/pod-resolv.conf
---
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
conntrack:
  # nf_conntrack_max is not writable from a node's netns (EINVAL)
  maxPerCore: 0
EOF

ldocker exec "$node" sh -c "mkdir -p /etc/kubernetes && printf 'nameserver $LAB_GATEWAY\noptions ndots:5\n' >/etc/kubernetes/pod-resolv.conf"
if ldocker exec "$node" test -f /etc/kubernetes/admin.conf; then
  log "$node: already initialised"
else
  t0=$SECONDS
  ldocker exec "$node" kubeadm init --config /root/kubeadm.yaml --upload-certs 2>&1 | tee "$LAB_STATE/kubeadm-init-$node.log" >&2
  [ "${PIPESTATUS[0]}" = 0 ] || die "kubeadm init failed, log in $LAB_STATE/kubeadm-init-$node.log"
  log "$node: kubeadm init took $((SECONDS - t0))s"
fi
"$LAB_DIR/cni.sh" "$node"

# join material for more nodes (control planes need the certificate key too)
K=(kubeadm --kubeconfig /etc/kubernetes/admin.conf)
{
  echo "JOIN_ENDPOINT=$endpoint"
  echo "JOIN_TOKEN=$(ldocker exec "$node" "${K[@]}" token create --ttl 2h)"
  echo "JOIN_CA_HASH=sha256:$(ldocker exec "$node" sh -c "openssl x509 -pubkey -in /etc/kubernetes/pki/ca.crt | openssl pkey -pubin -outform der | sha256sum | cut -d' ' -f1")"
  echo "JOIN_CERT_KEY=$(ldocker exec "$node" kubeadm init phase upload-certs --upload-certs --config /root/kubeadm.yaml 2>/dev/null | tail -1)"
} >"$LAB_STATE/join.env"
log "join material in $LAB_STATE/join.env"

#!/usr/bin/env bash
# External etcd for LAB_TOPOLOGY=external-etcd (kubeadm's "external etcd" HA topology): one etcd member in a
# container of its own at $LAB_ETCD_IP, outside every control-plane node, with certificates made by the real
# kubeadm as its external-etcd guide does (`kubeadm init phase certs etcd-*`, `apiserver-etcd-client`):
#   lab/etcd-external.sh K8S_VERSION CERT_NODE CP_NODE...
# CERT_NODE is a booted node with kubeadm installed (the certificates are made there, then removed from it).
# Every CP_NODE gets what kubeadm's etcd.external names: /etc/kubernetes/pki/etcd/ca.crt and
# /etc/kubernetes/pki/apiserver-etcd-client.{crt,key} (never the etcd CA key).
# The etcd image is the one kubeadm of K8S_VERSION lists (lab/build-images.sh), run by the lab dockerd.
# Idempotent: a running etcd container is kept; its client files are copied again.
set -euo pipefail
# shellcheck source=lab/lib.sh
. "$(dirname "$0")/lib.sh"
need cmd:curl "apt-get install -y curl"
deps_checked
kv=${1:?usage: etcd-external.sh K8S_VERSION CERT_NODE CP_NODE...} cert_node=${2:?} ; shift 2
[ $# -gt 0 ] || die "no control-plane node given"
name=$LAB_NAME-etcd1 ip=${LAB_SUBNET%.*}.$((LAB_ETCD_IP_BASE + 1))
pki=$LAB_STATE/etcd-pki
ref_file=$(awk '$1 ~ /\/etcd:/ {print $1, $2; exit}' "$LAB_CACHE/images/v$kv.list")
[ -n "$ref_file" ] || die "no etcd image in $LAB_CACHE/images/v$kv.list: lab/build-images.sh $kv"
ref=${ref_file% *} file=${ref_file#* }

if [ "$(ldocker inspect -f '{{.State.Running}}' "$name" 2>/dev/null)" != true ]; then
  ldocker image inspect "$ref" >/dev/null 2>&1 || ldocker load -i "$file" >/dev/null
  # Certificates: kubeadm's etcd CA, server and peer certificates for the etcd address, the health-check client,
  # and the client certificate kube-apiserver presents (what the external-etcd guide makes on the etcd hosts).
  ldocker exec -i "$cert_node" tee /root/etcd-certs.yaml >/dev/null <<EOF
apiVersion: kubeadm.k8s.io/v1beta4
kind: InitConfiguration
localAPIEndpoint:
  advertiseAddress: $ip
nodeRegistration:
  name: $name
---
apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
kubernetesVersion: v$kv
certificatesDir: /root/etcd-pki
etcd:
  local:
    serverCertSANs: ["$ip"]
    peerCertSANs: ["$ip"]
EOF
  ldocker exec "$cert_node" rm -rf /root/etcd-pki
  for phase in etcd-ca etcd-server etcd-peer etcd-healthcheck-client apiserver-etcd-client; do
    ldocker exec "$cert_node" kubeadm init phase certs "$phase" --config /root/etcd-certs.yaml >&2
  done
  rm -rf "$pki" && mkdir -p "$pki" && chmod 700 "$pki"
  ldocker exec "$cert_node" tar -C /root/etcd-pki -cf - . | tar -C "$pki" -xf -
  ldocker exec "$cert_node" rm -rf /root/etcd-pki /root/etcd-certs.yaml

  ldocker rm -f -v "$name" >/dev/null 2>&1 || true
  e=/etc/kubernetes/pki/etcd
  ldocker create --name "$name" --hostname "$name" --net "$LAB_NET" --ip "$ip" --restart=unless-stopped \
    --label "$LAB_NAME.etcd=$name" --volume /var/lib/etcd "$ref" \
    --name="$name" --data-dir=/var/lib/etcd \
    --listen-client-urls="https://$ip:2379,https://127.0.0.1:2379" --advertise-client-urls="https://$ip:2379" \
    --listen-peer-urls="https://$ip:2380" --initial-advertise-peer-urls="https://$ip:2380" \
    --initial-cluster="$name=https://$ip:2380" --initial-cluster-state=new \
    --cert-file=$e/server.crt --key-file=$e/server.key --trusted-ca-file=$e/ca.crt --client-cert-auth=true \
    --peer-cert-file=$e/peer.crt --peer-key-file=$e/peer.key --peer-trusted-ca-file=$e/ca.crt \
    --peer-client-cert-auth=true --listen-metrics-urls=http://127.0.0.1:2381 >/dev/null
  # docker cp of a tar stream: the image has no /etc/kubernetes to copy a directory into
  tar -C "$pki" --transform 's#^\./etcd#./etc/kubernetes/pki/etcd#' -cf - ./etcd | ldocker cp - "$name:/"
  ldocker start "$name" >/dev/null
fi

for i in $(seq 60); do
  r=$(curl -sS --max-time 3 --cacert "$pki/etcd/ca.crt" --cert "$pki/etcd/healthcheck-client.crt" \
    --key "$pki/etcd/healthcheck-client.key" "https://$ip:2379/health" 2>&1 || true)
  [[ $r == *'"health":"true"'* ]] && break
  [ "$i" = 60 ] && { ldocker logs --tail 30 "$name" >&2; die "external etcd at $ip not healthy after 60 s: $r"; }
  sleep 1
done
log "external etcd $name at https://$ip:2379 ($ref): healthy"

for node in "$@"; do
  ldocker exec "$node" mkdir -p /etc/kubernetes/pki/etcd
  tar -C "$pki" -cf - ./etcd/ca.crt ./apiserver-etcd-client.crt ./apiserver-etcd-client.key |
    ldocker exec -i "$node" tar -C /etc/kubernetes/pki --no-same-owner -xf -
  ldocker exec "$node" chmod 600 /etc/kubernetes/pki/apiserver-etcd-client.key
done
log "etcd client certificate and CA on $*"
echo "https://$ip:2379"

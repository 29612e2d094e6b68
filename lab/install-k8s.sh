#!/usr/bin/env bash
# Install kubeadm, kubelet and kubectl in a node with apt from the lab repository, the way
# kubeadm's install guide does with pkgs.k8s.io (and the collection's packages role does):
#   curl -fsSL http://$LAB_GATEWAY:$REPO_PORT/v1.X/deb/Release.key | gpg --dearmor -o /etc/apt/keyrings/kubernetes-apt-keyring.gpg
#   /etc/apt/sources.list.d/kubernetes.list:
#     deb [signed-by=/etc/apt/keyrings/kubernetes-apt-keyring.gpg] http://$LAB_GATEWAY:$REPO_PORT/v1.X/deb/ /
#   apt-get install kubelet=V-1.1 kubeadm=V-1.1 kubectl=V-1.1; apt-mark hold; systemctl enable --now kubelet
#   lab/install-k8s.sh NODE [K8S_VERSION]     (default K8S_OLD_VERSION)
# The node image has no other apt source (no route out), so apt-get update sees only this one.
# Idempotent: a node that has the three packages installed (any version: it may have been
# upgraded since) is left alone.
set -euo pipefail
# shellcheck source=lab/lib.sh
. "$(dirname "$0")/lib.sh"
node=${1:?usage: install-k8s.sh NODE [K8S_VERSION]} kv=${2:-$K8S_OLD_VERSION}
t0=$SECONDS
# shellcheck disable=SC2016  # dpkg-query's own ${field} syntax
have=$(ldocker exec "$node" dpkg-query -W -f '${Package}=${Version} ${db:Status-Abbrev}\n' kubeadm kubelet kubectl 2>/dev/null | awk 'substr($2, 2, 1) == "i" {print $1}' || true)
if [ "$(wc -l <<<"$have")" = 3 ]; then
  log "$node: already installed: $(tr '\n' ' ' <<<"$have")"; exit 0
fi
ldocker exec -i "$node" bash -euo pipefail -s "$kv" "http://$LAB_GATEWAY:$REPO_PORT" <<'IN'
kv=$1 base=$2 v=$1-1.1
export DEBIAN_FRONTEND=noninteractive
keyring=/etc/apt/keyrings/kubernetes-apt-keyring.gpg
mkdir -p -m 0755 /etc/apt/keyrings
curl -fsSL "$base/v${kv%.*}/deb/Release.key" | gpg --batch --yes --dearmor -o "$keyring"
chmod 0644 "$keyring"
echo "deb [signed-by=$keyring] $base/v${kv%.*}/deb/ /" >/etc/apt/sources.list.d/kubernetes.list
apt-get update -q >/tmp/apt-update.log 2>&1 || { cat /tmp/apt-update.log >&2; exit 1; }
apt-get install -y -q --no-install-recommends "kubelet=$v" "kubeadm=$v" "kubectl=$v" >/tmp/apt-install.log 2>&1 \
  || { cat /tmp/apt-install.log >&2; exit 1; }
apt-mark hold kubelet kubeadm kubectl >/dev/null
systemctl enable --now kubelet >/dev/null 2>&1
IN
log "$node: kubelet/kubeadm/kubectl $kv-1.1 from the lab repo, held ($((SECONDS - t0))s)"

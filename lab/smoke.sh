#!/usr/bin/env bash
# Pod-network smoke test of the running lab (about 20 s; leaves nothing behind):
#   lab/smoke.sh [SERVER_NODE [CLIENT_NODE]]    default: the last control plane and the first worker
# - server pod on SERVER_NODE: the etcd image, plain-HTTP etcd on :2379, behind a ClusterIP Service
# - client pod on CLIENT_NODE: the kube-proxy image (bash), which fetches /health from the server
#   pod's IP (pod -> pod across nodes: lab/cni.sh routes) and from the Service IP (kube-proxy
#   iptables), and opens a TCP connection to the `kubernetes` Service (10.96.0.1:443)
# Uses only images every node already has (no registry).
set -euo pipefail
# shellcheck source=lab/lib.sh
. "$(dirname "$0")/lib.sh"
KCFG=$LAB_STATE/admin.conf
[ -f "$KCFG" ] || die "$KCFG missing: lab/up.sh (or lab/inventory.sh)"
k() { "$(k8s_bin "$K8S_OLD_VERSION")/kubectl" --kubeconfig "$KCFG" "$@"; }
nodes=$(k get nodes -o name | sed 's|node/||' | sort -V)
server=${1:-$(grep -- '-cp' <<<"$nodes" | tail -1)}
client=${2:-$( (grep -- '-w' <<<"$nodes" || echo "$nodes") | head -1)}
etcd_img=$(awk '/\/etcd:/ {print $1}' "$LAB_CACHE/images/v$K8S_OLD_VERSION.list")
proxy_img=$(awk '/\/kube-proxy:/ {print $1}' "$LAB_CACHE/images/v$K8S_OLD_VERSION.list")
ns=lab-smoke t0=$SECONDS
k delete ns "$ns" --ignore-not-found --wait >/dev/null
trap 'k delete ns "$ns" --ignore-not-found --wait=false >/dev/null' EXIT
k create ns "$ns" >/dev/null
k -n "$ns" apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: server, labels: {app: server}}
spec:
  nodeName: $server
  tolerations: [{operator: Exists}]
  containers:
  - name: etcd
    image: $etcd_img
    imagePullPolicy: Never
    command: [etcd, --data-dir=/tmp/etcd, --listen-client-urls=http://0.0.0.0:2379, --advertise-client-urls=http://127.0.0.1:2379]
    readinessProbe: {httpGet: {path: /health, port: 2379}, periodSeconds: 1}
---
apiVersion: v1
kind: Service
metadata: {name: server}
spec:
  selector: {app: server}
  ports: [{port: 80, targetPort: 2379}]
EOF
k -n "$ns" wait --for=condition=Ready pod/server --timeout=120s >/dev/null
pod_ip=$(k -n "$ns" get pod server -o jsonpath='{.status.podIP}')
svc_ip=$(k -n "$ns" get svc server -o jsonpath='{.spec.clusterIP}')
k -n "$ns" apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: client}
spec:
  nodeName: $client
  tolerations: [{operator: Exists}]
  restartPolicy: Never
  containers:
  - name: client
    image: $proxy_img
    imagePullPolicy: Never
    command:
    - bash
    - -c
    - |
      get() { exec 3<>"/dev/tcp/\$1/\$2" && printf 'GET /health HTTP/1.0\r\n\r\n' >&3 && tail -1 <&3; exec 3<&-; }
      echo "pod \$(hostname -i) -> server pod $pod_ip:2379: \$(timeout 5 bash -c "\$(declare -f get); get $pod_ip 2379")"
      echo "pod -> service $svc_ip:80: \$(timeout 5 bash -c "\$(declare -f get); get $svc_ip 80")"
      timeout 5 bash -c 'exec 3<>/dev/tcp/10.96.0.1/443' && echo "pod -> kubernetes service 10.96.0.1:443: connected"
EOF
for _ in $(seq 60); do
  phase=$(k -n "$ns" get pod client -o jsonpath='{.status.phase}')
  case "$phase" in Succeeded|Failed) break ;; esac; sleep 1
done
out=$(k -n "$ns" logs client)
echo "$out"
log "server on $server ($pod_ip), client on $client: $phase in $((SECONDS - t0))s"
if [ "$phase" != Succeeded ] || [ "$(grep -c '"health":"true"' <<<"$out")" != 2 ] || ! grep -q connected <<<"$out"; then
  die "pod network check failed"
fi
log "pod network OK"

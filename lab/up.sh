#!/usr/bin/env bash
# Feasibility run end to end: build (cached), own dockerd, one control-plane node via kubeadm
# init, bridge CNI, wait for Ready; optionally more control-plane nodes joining it.
#   lab/up.sh [N_CONTROL_PLANES]      default 1; nodes ${LAB_NAME}-cp1.. at 10.214.1.11..
# Prints a timing summary; the measured "docker run -> Ready" excludes builds.
set -euo pipefail
# shellcheck source=lab/lib.sh
. "$(dirname "$0")/lib.sh"
n=${1:-1} kv=${K8S_VERSION:-$K8S_OLD_VERSION}
T=(); tick() { T+=("$1 $(( SECONDS - t_start ))s"); }
t_start=$SECONDS

"$LAB_DIR/build-deps.sh"; tick build-deps
"$LAB_DIR/build-images.sh" "$kv"; tick build-images
"$LAB_DIR/dockerd.sh" start; tick dockerd
image=$("$LAB_DIR/build-node-image.sh" | tail -1); tick node-image

kc() { ldocker exec "$1" kubectl --kubeconfig /etc/kubernetes/admin.conf "${@:2}"; }
wait_ready() { # CP NODE
  local i
  for i in $(seq 600); do
    [ "$(kc "$1" get node "$2" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ] && return 0
    sleep 1
  done
  die "$2 not Ready after 600s"
}

cp1=$LAB_NAME-cp1 ip1=10.214.1.11
t_run=$SECONDS
"$LAB_DIR/run-node.sh" "$cp1" "$ip1" "$image"; tick "$cp1 systemd running"
"$LAB_DIR/install-k8s-by-hand.sh" "$cp1" "$kv"
"$LAB_DIR/load-images.sh" "$cp1" "$kv"; tick "$cp1 k8s installed + images imported"
"$LAB_DIR/kubeadm-init.sh" "$cp1" "$ip1" "$kv"; tick "$cp1 kubeadm init + CNI"
[ "$(kc "$cp1" get --raw /readyz)" = ok ] || die "/readyz not ok"
wait_ready "$cp1" "$cp1"; tick "$cp1 Ready"
log "$cp1: docker run -> Ready in $((SECONDS - t_run))s"

for i in $(seq 2 "$n"); do
  node=$LAB_NAME-cp$i ip=10.214.1.$((10 + i)) t_run=$SECONDS
  "$LAB_DIR/run-node.sh" "$node" "$ip" "$image"
  "$LAB_DIR/install-k8s-by-hand.sh" "$node" "$kv"
  "$LAB_DIR/load-images.sh" "$node" "$kv"; tick "$node booted + images"
  "$LAB_DIR/kubeadm-join.sh" "$node" "$ip"; tick "$node kubeadm join"
  "$LAB_DIR/cni.sh" "$cp1"
  wait_ready "$cp1" "$node"; tick "$node Ready"
  log "$node: docker run -> Ready in $((SECONDS - t_run))s"
done

kc "$cp1" get nodes -o wide
kc "$cp1" get pods -A -o wide
printf '%s\n' "${T[@]}" | tee "$LAB_STATE/timings.txt"

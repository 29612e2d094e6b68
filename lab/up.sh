#!/usr/bin/env bash
# The whole lab, converging (re-running on a running lab changes nothing that is already right):
#   lab/up.sh [CONTROL_PLANES [WORKERS]]      default 3 control planes + 2 workers at K8S_OLD_VERSION
#   LAB_TOPOLOGY=ha (default: 3 + 2) | single (1 control plane + 1 worker) | external-etcd (2 + 1, and etcd in a
#   container of its own outside the control planes, kubeadm's etcd.external) sets the shape.
# 1. builds what is missing (all cached): runtime, images of both pinned versions, .deb
#    packages + apt repository, node image; own dockerd; repository server on $LAB_GATEWAY
# 2. haproxy LB at $LAB_LB_IP in front of every control plane (controlPlaneEndpoint)
# 3. all nodes in parallel: docker run, kubeadm/kubelet/kubectl with apt from the lab repository
#    (pinned, held), kubeadm's images of BOTH versions (no registry: the upgrade pulls nothing)
# 4. kubeadm init on cp1, control-plane joins one at a time, worker joins in parallel, pod routes
# 5. waits for every node Ready and every kube-system pod Ready; writes inventory + admin.conf
# Nodes: $LAB_NAME-cp<i> at 10.214.1.(LAB_CP_IP_BASE+i), $LAB_NAME-w<j> at 10.214.1.(LAB_WORKER_IP_BASE+j).
# K8S_VERSION=X.Y.Z starts the lab at another version (default K8S_OLD_VERSION), e.g. 1.35.4 for the
# 1.35 -> 1.36 and chained paths: its images and packages are built and loaded beside the pinned pair.
set -euo pipefail
# shellcheck source=lab/lib.sh
. "$(dirname "$0")/lib.sh"
# Ansible reaches the nodes over SSH (lab/inventory.sh); everything else is checked by the build scripts.
need cmd:ssh "apt-get install -y openssh-client"
need cmd:curl "apt-get install -y curl"
deps_checked
case ${LAB_TOPOLOGY:-ha} in
  ha) def_cp=3 def_w=2 ;;
  single) def_cp=1 def_w=1 ;;
  external-etcd) def_cp=2 def_w=1 ;;
  *) die "LAB_TOPOLOGY=${LAB_TOPOLOGY}: known shapes are ha, single and external-etcd" ;;
esac
ncp=${1:-$def_cp} nw=${2:-$def_w} kv=${K8S_VERSION:-$K8S_OLD_VERSION}
[ "$ncp" -ge 1 ] || die "need at least one control plane"
T=(); tick() { T+=("$(printf '%-44s %4ss' "$1" $(( SECONDS - t_start )))"); log "--- $1 ($(( SECONDS - t_start ))s)"; }
t_start=$SECONDS
net=${LAB_SUBNET%.*}
# every version the lab can be upgraded to from $kv, its own included (images and packages of each)
mapfile -t lab_versions < <(printf '%s\n' "$kv" "$K8S_OLD_VERSION" "$K8S_NEW_VERSION" | sort -uV)

"$LAB_DIR/build.sh" "${lab_versions[@]}"; tick "builds: runtime, images, packages, node image"
"$LAB_DIR/dockerd.sh" start
"$LAB_DIR/repo-server.sh" start; tick "dockerd + repository server"
# built above: this loads it into the lab's dockerd and prints its tag
image=$("$LAB_DIR/build-node-image.sh" | tail -1); tick "node image loaded"

cps=() cp_ips=() ws=() w_ips=()
for i in $(seq "$ncp"); do cps+=("$LAB_NAME-cp$i"); cp_ips+=("$net.$((LAB_CP_IP_BASE + i))"); done
for j in $(seq "$nw"); do ws+=("$LAB_NAME-w$j"); w_ips+=("$net.$((LAB_WORKER_IP_BASE + j))"); done
cp1=${cps[0]} ip1=${cp_ips[0]}

lb_servers=(); for i in "${!cps[@]}"; do lb_servers+=("${cps[$i]}=${cp_ips[$i]}"); done
"$LAB_DIR/lb.sh" "${lb_servers[@]}"; tick "load balancer $LAB_LB_IP"

# --- every node in parallel: boot, packages, images ---
prep() { # NAME IP [--worker]
  "$LAB_DIR/run-node.sh" "$1" "$2" "$image"
  "$LAB_DIR/install-k8s.sh" "$1" "$kv"
  # shellcheck disable=SC2086  # $3 is empty or --worker
  "$LAB_DIR/load-images.sh" ${3:-} "$1" "${lab_versions[@]}"
}
pids=()
for i in "${!cps[@]}"; do prep "${cps[$i]}" "${cp_ips[$i]}" & pids+=($!); done
for j in "${!ws[@]}"; do prep "${ws[$j]}" "${w_ips[$j]}" --worker & pids+=($!); done
rc=0; for p in "${pids[@]}"; do wait "$p" || rc=1; done
[ $rc = 0 ] || die "preparing the nodes failed (see above)"
tick "$((ncp + nw)) nodes booted, packages + images"

kc() { ldocker exec "$cp1" kubectl --kubeconfig /etc/kubernetes/admin.conf "$@"; }
wait_ready() { # NODE...
  local n i
  for n in "$@"; do
    for i in $(seq 600); do
      [ "$(kc get node "$n" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ] && break
      [ "$i" = 600 ] && die "$n not Ready after 600s"
      sleep 1
    done
  done
}

etcd_endpoints=
if [ "${LAB_TOPOLOGY:-ha}" = external-etcd ]; then
  etcd_endpoints=$("$LAB_DIR/etcd-external.sh" "$kv" "$cp1" "${cps[@]}" | tail -1); tick "external etcd $etcd_endpoints"
fi
LAB_ETCD_ENDPOINTS=$etcd_endpoints "$LAB_DIR/kubeadm-init.sh" "$cp1" "$ip1" "$kv"; tick "$cp1 kubeadm init + CNI"
[ "$(kc get --raw /readyz)" = ok ] || die "/readyz not ok"
wait_ready "$cp1"; tick "$cp1 Ready"

# control planes one at a time (etcd membership changes), then workers together
for i in "${!cps[@]}"; do
  [ "$i" = 0 ] && continue
  "$LAB_DIR/kubeadm-join.sh" "${cps[$i]}" "${cp_ips[$i]}" control-plane; tick "${cps[$i]} kubeadm join (control plane)"
done
pids=()
for j in "${!ws[@]}"; do "$LAB_DIR/kubeadm-join.sh" "${ws[$j]}" "${w_ips[$j]}" worker & pids+=($!); done
rc=0; for p in "${pids[@]}"; do wait "$p" || rc=1; done
[ $rc = 0 ] || die "a worker join failed (see above)"
[ ${#ws[@]} = 0 ] || tick "workers kubeadm join"

# kubeadm join can return before the kubelet has registered its Node: cni.sh configures only the
# nodes it sees, so wait for every Node object first (a worker missed here stays NotReady).
for n in "${cps[@]}" "${ws[@]}"; do
  for i in $(seq 120); do kc get node "$n" >/dev/null 2>&1 && break; [ "$i" = 120 ] && die "$n never registered"; sleep 1; done
done
"$LAB_DIR/cni.sh" "$cp1"
wait_ready "${cps[@]}" "${ws[@]}"; tick "all nodes Ready"
kc -n kube-system wait --for=condition=Ready pods --all --timeout=300s >/dev/null; tick "all kube-system pods Ready"

"$LAB_DIR/inventory.sh" --check; tick "inventory + admin.conf checked"
kc get pods -A -o wide
printf '%s\n' "${T[@]}" | tee "$LAB_STATE/timings.txt"
log "lab up: $LAB_STATE/inventory.ini, KUBECONFIG=$LAB_STATE/admin.conf, repository http://$LAB_GATEWAY:$REPO_PORT"

#!/usr/bin/env bash
# Ansible and kubectl access to the running lab, from the host:
#   $LAB_STATE/inventory.ini   groups kube_control_plane (cp1 first) and kube_workers; $LAB_SSH_USER (sudo) over ssh
#                              with the lab key; the lab repository and its key fingerprint as skewsafe_package_repo_*
#   $LAB_STATE/admin.conf      cp1's admin.conf (server = the LB, https://$LAB_LB_IP:6443)
#   lab/inventory.sh [--check]   --check: kubectl get nodes through it, /readyz through the LB and
#                                at every control plane, and `ansible all -m ping` with the collection's venv
set -euo pipefail
# shellcheck source=lab/lib.sh
. "$(dirname "$0")/lib.sh"
"$LAB_DIR/dockerd.sh" status >/dev/null || die "lab dockerd not running"
[ -s "$LAB_CACHE/repo-key/fingerprint" ] || die "no lab repository key: run lab/build-debs.sh"
INV=$LAB_STATE/inventory.ini KCFG=$LAB_STATE/admin.conf

# name ip, for every node container (label $LAB_NAME.node)
nodes=$(ldocker ps --filter "label=$LAB_NAME.node" --format '{{.Names}}' | sort -V \
  | while read -r n; do echo "$n $(ldocker inspect -f "{{(index .NetworkSettings.Networks \"$LAB_NET\").IPAddress}}" "$n")"; done)
cps=$(grep -E -- "^$LAB_NAME-cp[0-9]+ " <<<"$nodes" || true)
workers=$(grep -E -- "^$LAB_NAME-w[0-9]+ " <<<"$nodes" || true)
[ -n "$cps" ] || die "no control-plane containers running"
cp1=$(head -1 <<<"$cps" | cut -d' ' -f1)

{
  echo "# written by lab/inventory.sh: the running lab ($(date -u +%FT%TZ))"
  echo "[kube_control_plane]"
  awk '{print $1, "ansible_host=" $2}' <<<"$cps"
  echo
  echo "[kube_workers]"
  [ -z "$workers" ] || awk '{print $1, "ansible_host=" $2}' <<<"$workers"
  echo
  echo "[all:vars]"
  # a non-root user with sudo, as operators run it: every node task goes through become
  echo "ansible_user=$LAB_SSH_USER"
  echo "ansible_become=true"
  # a 2-core machine running the lab beside other tiers: ansible's 10 s default gave up on become under load (CI)
  echo "ansible_timeout=30"
  echo "ansible_ssh_private_key_file=$LAB_CACHE/ssh/id_ed25519"
  echo "ansible_ssh_common_args='-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null'"
  echo "ansible_python_interpreter=/usr/bin/python3"
  # as kubespray's ansible.cfg: one ssh round trip per task instead of several (LAB_PIPELINING=0: Ansible's default)
  [ "${LAB_PIPELINING:-1}" != 1 ] || echo "ansible_pipelining=true"
  # the balancer's stats page, for lab/files/balancer-*.yml (skewsafe_balancer_take_out_tasks, ..._put_back_tasks)
  echo "lab_haproxy_stats_url=http://$LAB_LB_IP:8404/stats"
  echo "skewsafe_package_repo_base_url=http://$LAB_GATEWAY:$REPO_PORT"
  # The lab repository is signed with the lab's own key (lab/build-debs.sh): the roles check its fingerprint.
  echo "skewsafe_package_repo_key_fingerprint=$(cat "$LAB_CACHE/repo-key/fingerprint")"
  # This host is cgroup v1 (kubeadm's SystemVerification fails on it); a lab made with BUILD_COREDNS=0 runs
  # without CoreDNS (dns.disabled), so kubeadm upgrade's CoreDNS checks fail with "start version '' not supported".
  if [ "${BUILD_COREDNS:-1}" != 1 ]; then
    echo "control_plane_upgrade_ignore_preflight_errors=['SystemVerification', 'CoreDNSUnsupportedPlugins', 'CoreDNSMigration']"
  else
    echo "control_plane_upgrade_ignore_preflight_errors=['SystemVerification']"
  fi
  echo "node_upgrade_ignore_preflight_errors=['SystemVerification']"
} >"$INV.tmp"
mv "$INV.tmp" "$INV"
ldocker exec "$cp1" cat /etc/kubernetes/admin.conf >"$KCFG.tmp"
chmod 600 "$KCFG.tmp"; mv "$KCFG.tmp" "$KCFG"
log "wrote $INV ($(wc -l <<<"$cps") control planes, $( [ -n "$workers" ] && wc -l <<<"$workers" || echo 0) workers) and $KCFG ($(awk '/server:/ {print $2}' "$KCFG"))"

[ "${1:-}" = --check ] || exit 0
kubectl=$(k8s_bin "$K8S_OLD_VERSION")/kubectl
"$kubectl" --kubeconfig "$KCFG" get nodes -o wide
for ip in "$LAB_LB_IP" $(awk '{print $2}' <<<"$cps"); do
  r=$("$kubectl" --kubeconfig "$KCFG" --server "https://$ip:6443" get --raw /readyz 2>&1 || true)
  [ "$r" = ok ] || die "/readyz at $ip:6443: $r"
  log "/readyz at $ip:6443: ok"
done
# shellcheck source=/dev/null
. "$REPO_DIR/hack/env.sh"
# shellcheck disable=SC2153  # VENV comes from hack/env.sh
if [ -x "$VENV/bin/ansible" ]; then
  "$VENV/bin/ansible" -i "$INV" all -m ping -o
else
  log "no tool venv at $VENV: run TIERS=setup hack/test.sh once, then lab/inventory.sh --check"
fi

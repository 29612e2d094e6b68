#!/usr/bin/env bash
# make bench-etcd-leader: what stopping the etcd leader costs the API servers, killed as a new kubelet kills an
# orphaned static Pod (1 s grace) or stopped with SIGTERM and time to hand leadership over (30 s grace), under the
# bench's load (bench.loadgen through the balancer and at every API server). Needs the running HA lab (lab/up.sh).
#   bench/etcd_leader_stop.sh [MODE...]   MODE k1 (crictl stop --timeout 1) or g30 (--timeout 30),
#                                         one 50 s trial each, leader stopped 15 s in; default k1 g30 k1 g30 k1 g30
#   BENCH_OUT=dir                          default ~/.cache/skewsafe/bench/etcd-leader-<UTC time>
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=lab/lib.sh
. "$repo/lab/lib.sh"
# shellcheck source=bench/env.sh
. "$repo/bench/env.sh"
[ -x "$BENCH_PY" ] || TIERS=setup "$repo/hack/test.sh" >/dev/null
kc=$LAB_STATE/admin.conf
[ -s "$kc" ] || die "no $kc: start the lab first (lab/up.sh)"
out=${BENCH_OUT:-$CACHE/bench/etcd-leader-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"
net=${LAB_LB_IP%.*}
cp1=$LAB_NAME-cp1
certs="--cacert=/etc/kubernetes/pki/etcd/ca.crt --cert=/etc/kubernetes/pki/etcd/healthcheck-client.crt \
--key=/etc/kubernetes/pki/etcd/healthcheck-client.key"
# The leader's client URL, asked of cp1's member (it answers for the whole cluster).
leader() {
  ldocker exec "$cp1" sh -c "crictl exec \$(crictl ps --name '^etcd\$' -q | head -1) etcdctl \
    --endpoints=https://127.0.0.1:2379 $certs endpoint status --cluster -w json" |
    "$BENCH_PY" -c 'import json, sys
s = json.load(sys.stdin)
print(next(e["Endpoint"] for e in s if e["Status"]["header"]["member_id"] == s[0]["Status"]["leader"]))'
}
servers=()
for i in 1 2 3; do servers+=("--server=$LAB_NAME-cp$i=https://$net.$((LAB_CP_IP_BASE + i)):6443"); done
[ $# -gt 0 ] || set -- k1 g30 k1 g30 k1 g30
cd "$repo"
i=0
for mode in "$@"; do
  case $mode in k1) grace=1 ;; g30) grace=30 ;; *) die "mode '$mode': k1 or g30" ;; esac
  i=$((i + 1)) d=$out/$i-$mode
  mkdir -p "$d"
  "$BENCH_PY" -m bench.loadgen --kubeconfig "$kc" --lb "lb=https://$LAB_LB_IP:6443" --rate 40 --duration 50 \
    --out "$d/requests.jsonl" "${servers[@]}" 2>"$d/loadgen.log" &
  lg=$!
  sleep 15
  ep=$(leader) ip=${ep#https://} ip=${ip%:*}
  node=$LAB_NAME-cp$((${ip##*.} - LAB_CP_IP_BASE))
  log "trial $i: crictl stop --timeout $grace of the etcd leader on $node"
  echo "$(date +%s.%N) $node $grace" >"$d/stop.txt"
  ldocker exec "$node" sh -c "for c in \$(crictl ps --name '^etcd\$' -q); do crictl stop --timeout $grace \$c; done" >/dev/null
  date +%s.%N >>"$d/stop.txt"
  wait "$lg"
  sleep 20 # the kubelet starts the member again; let it catch up before the next trial
done
"$BENCH_PY" -m bench.etcd_leader_stop "$out" | tee "$out/etcd-leader.md"

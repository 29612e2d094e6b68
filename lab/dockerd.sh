#!/usr/bin/env bash
# The lab's own dockerd (never the system one); why each setting: lab/README.md, "The VM and its workarounds":
#   lab/dockerd.sh start|stop|status|env
# - own bridge $LAB_BRIDGE, data-root/exec-root/socket under $LAB_STATE
# - --iptables=false (do not touch other daemons' chains), no NAT: nodes have no route out
# - default runtime = files/runc-capfilter (this VM lacks CAP_SYS_RESOURCE; --privileged fails otherwise)
# - lab network $LAB_NET ($LAB_SUBNET, bridge $LAB_NET_BRIDGE) + one FORWARD ACCEPT rule
# `env` prints `export DOCKER_HOST=...` for eval.
set -euo pipefail
# shellcheck source=lab/lib.sh
. "$(dirname "$0")/lib.sh"

PIDFILE=$LAB_STATE/docker.pid
FWD_RULE=(FORWARD -i "$LAB_NET_BRIDGE" -o "$LAB_NET_BRIDGE" -m comment --comment "$LAB_NAME-lab" -j ACCEPT)

running() { [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }

start() {
  need cmd:dockerd "apt-get install -y docker.io"
  need "cmd:$DOCKER_BIN" "apt-get install -y docker.io"
  need cmd:ip "apt-get install -y iproute2"
  need cmd:iptables "apt-get install -y iptables"
  deps_checked
  mkdir -p "$LAB_STATE"
  if running; then log "dockerd already running (pid $(cat "$PIDFILE"))"; else
    if ! ip link show "$LAB_BRIDGE" >/dev/null 2>&1; then
      ip link add "$LAB_BRIDGE" type bridge
      ip addr add "$LAB_BRIDGE_CIDR" dev "$LAB_BRIDGE"
    fi
    ip link set "$LAB_BRIDGE" up
    install -m 0755 "$LAB_DIR/files/runc-capfilter" "$LAB_STATE/runc-capfilter"
    setsid nohup dockerd -H "unix://$DOCKER_SOCK" --data-root "$LAB_STATE/docker-root" \
      --exec-root "$LAB_STATE/docker-exec" --pidfile "$PIDFILE" --bridge "$LAB_BRIDGE" \
      --iptables=false --ip-forward=false --ip-masq=false \
      --default-address-pool "base=$LAB_POOL,size=24" --storage-driver overlay2 \
      --cgroup-parent "/$LAB_NAME" \
      --add-runtime "capfilter=$LAB_STATE/runc-capfilter" --default-runtime capfilter \
      >"$LAB_STATE/dockerd.log" 2>&1 &
    local _i
    for _i in $(seq 100); do ldocker version >/dev/null 2>&1 && break; sleep 0.1; done
    ldocker version >/dev/null 2>&1 || die "dockerd did not come up; see $LAB_STATE/dockerd.log"
    log "dockerd up (pid $(cat "$PIDFILE")), socket $DOCKER_SOCK"
  fi
  if ! ldocker network inspect "$LAB_NET" >/dev/null 2>&1; then
    ldocker network create --subnet "$LAB_SUBNET" --gateway "$LAB_GATEWAY" \
      -o "com.docker.network.bridge.name=$LAB_NET_BRIDGE" "$LAB_NET" >/dev/null
    log "network $LAB_NET ($LAB_SUBNET) created"
  fi
  iptables -C "${FWD_RULE[@]}" 2>/dev/null || iptables -I "${FWD_RULE[@]}"
}

stop() {
  if running; then
    local pid; pid=$(cat "$PIDFILE")
    kill -TERM "$pid"
    local _i; for _i in $(seq 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && die "dockerd $pid did not stop"
    log "dockerd stopped"
  fi
  while iptables -C "${FWD_RULE[@]}" 2>/dev/null; do iptables -D "${FWD_RULE[@]}"; done
  ip link show "$LAB_NET_BRIDGE" >/dev/null 2>&1 && ip link del "$LAB_NET_BRIDGE"
  ip link show "$LAB_BRIDGE" >/dev/null 2>&1 && ip link del "$LAB_BRIDGE"
  return 0
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) if running; then echo "running pid $(cat "$PIDFILE")"; else echo stopped; exit 1; fi ;;
  env) echo "export DOCKER_HOST=unix://$DOCKER_SOCK" ;;
  *) echo "usage: $0 start|stop|status|env" >&2; exit 2 ;;
esac

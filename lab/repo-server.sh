#!/usr/bin/env bash
# Serve the local apt repository ($LAB_CACHE/repo, lab/build-debs.sh) over HTTP on the lab
# gateway address, the only address the nodes can reach outside their network:
#   lab/repo-server.sh start|stop|status      -> http://$LAB_GATEWAY:$REPO_PORT/v1.36/deb/
# python3 -m http.server, bound to $LAB_GATEWAY only (needs the lab network: lab/dockerd.sh start).
# Pid file and request log under $LAB_STATE. Idempotent.
set -euo pipefail
# shellcheck source=lab/lib.sh
. "$(dirname "$0")/lib.sh"
PIDFILE=$LAB_STATE/repo-http.pid
URL=http://$LAB_GATEWAY:$REPO_PORT

running() { [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }

start() {
  need cmd:python3 "Python 3"
  need cmd:curl "apt-get install -y curl"
  need cmd:ip "apt-get install -y iproute2"
  deps_checked
  [ -f "$LAB_CACHE/repo/v${K8S_OLD_VERSION%.*}/deb/Packages" ] || die "no repository: run lab/build-debs.sh"
  ip -4 addr show | grep "inet $LAB_GATEWAY/" >/dev/null || die "$LAB_GATEWAY is not on this host: lab/dockerd.sh start"
  if running; then log "already serving $URL (pid $(cat "$PIDFILE"))"; return; fi
  mkdir -p "$LAB_STATE"
  # own session: the server outlives the shell (and the process group) that started it
  setsid nohup python3 -m http.server --bind "$LAB_GATEWAY" --directory "$LAB_CACHE/repo" "$REPO_PORT" \
    >"$LAB_STATE/repo-http.log" 2>&1 &
  echo $! >"$PIDFILE"
  local _i
  for _i in $(seq 50); do curl -fsS -o /dev/null "$URL/" 2>/dev/null && break; sleep 0.1; done
  curl -fsS -o /dev/null "$URL/v${K8S_OLD_VERSION%.*}/deb/Release" || die "repository server did not come up; see $LAB_STATE/repo-http.log"
  log "serving $LAB_CACHE/repo at $URL (pid $(cat "$PIDFILE"))"
}

stop() {
  if running; then
    local pid; pid=$(cat "$PIDFILE")
    kill -TERM "$pid"
    local _i; for _i in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    log "repository server stopped"
  fi
  rm -f "$PIDFILE"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) if running; then echo "serving $URL pid $(cat "$PIDFILE")"; else echo stopped; exit 1; fi ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac

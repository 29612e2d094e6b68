# shellcheck shell=bash
# A dockerd of the project's own for the controller-side images (the newer-core controller and
# the execution environment), sourced by hack/controller/run.sh and hack/ee/run.sh. Never the
# system dockerd: socket, data-root, exec-root and pidfile live under $OWN_DOCKERD_RUN; no bridge,
# no iptables (containers use --network host). One user at a time: own_dockerd_start takes a lock
# that is held until the caller exits; own_dockerd_stop stops the daemon again.
#
#   OWN_DOCKERD_RUN=DIR; own_dockerd_start; odocker ps; own_dockerd_stop
# Needs log/die (lab/lib.sh) and DOCKER_BIN.

odocker() { "$DOCKER_BIN" -H "unix://$OWN_DOCKERD_RUN/docker.sock" "$@"; }

own_dockerd_ours() { # PID is a dockerd on our socket
  [ -r "/proc/$1/cmdline" ] && tr '\0' ' ' <"/proc/$1/cmdline" | grep -q -- "unix://$OWN_DOCKERD_RUN/docker.sock"
}

own_dockerd_stop() {
  local pidfile=$OWN_DOCKERD_RUN/docker.pid pid _i
  if [ -f "$pidfile" ]; then
    pid=$(cat "$pidfile")
    if kill -0 "$pid" 2>/dev/null && own_dockerd_ours "$pid"; then
      kill -TERM "$pid"
      for _i in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      if kill -0 "$pid" 2>/dev/null; then log "dockerd $pid did not stop in 30s"; return 1; fi
      log "dockerd stopped"
    fi
    rm -f "$pidfile"
  fi
  # dockerd 20.10 leaves exec/netns/default mounted
  if grep -q " $OWN_DOCKERD_RUN/" /proc/mounts; then
    grep " $OWN_DOCKERD_RUN/" /proc/mounts | awk '{print $2}' | sort -r | xargs -r -n1 umount -l
    log "lazily unmounted leftovers under $OWN_DOCKERD_RUN"
  fi
}

own_dockerd_start() {
  local _i
  mkdir -p "$OWN_DOCKERD_RUN"
  exec 8>"$OWN_DOCKERD_RUN/../.run.lock"
  flock 8
  own_dockerd_stop # a leftover of a killed run (we hold the lock, so it is not a live run's)
  nohup dockerd -H "unix://$OWN_DOCKERD_RUN/docker.sock" --data-root "$OWN_DOCKERD_RUN/data-root" \
    --exec-root "$OWN_DOCKERD_RUN/exec" --pidfile "$OWN_DOCKERD_RUN/docker.pid" --bridge=none \
    --iptables=false --ip-masq=false --ip-forward=false --storage-driver overlay2 \
    --cgroup-parent /skewsafe-controller >"$OWN_DOCKERD_RUN/dockerd.log" 2>&1 &
  for _i in $(seq 150); do odocker version >/dev/null 2>&1 && break; sleep 0.2; done
  odocker version >/dev/null 2>&1 || { tail -20 "$OWN_DOCKERD_RUN/dockerd.log" >&2; die "dockerd did not come up ($OWN_DOCKERD_RUN/dockerd.log)"; }
  log "own dockerd up (pid $(cat "$OWN_DOCKERD_RUN/docker.pid")), socket $OWN_DOCKERD_RUN/docker.sock"
}

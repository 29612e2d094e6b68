# shellcheck shell=bash
# A dockerd of the project's own for the controller-side images (the newer-core controller and
# the execution environment), sourced by hack/controller/run.sh and hack/ee/run.sh. Never the
# system dockerd: socket, data-root, exec-root and pidfile live under $OWN_DOCKERD_RUN; no bridge,
# no iptables (containers use --network host). One user at a time: own_dockerd_start takes a lock
# that is held until the caller exits; own_dockerd_stop stops the daemon again.
#
#   OWN_DOCKERD_RUN=DIR; own_dockerd_prereqs; own_dockerd_session; odocker ps   (stopped at exit)
# Needs log/die (lab/lib.sh), need/deps_checked (hack/deps.sh), DOCKER_BIN and $repo.

# The host's CA bundle, bind-mounted into containers (this VM's egress proxy re-signs TLS).
HOST_CA=/etc/ssl/certs/ca-certificates.crt
_own_dockerd_t0=$SECONDS

# What both callers need before any image work: the host packages, then each tool and the CA bundle.
# With CHECK_DEPS_ONLY set (the host-deps test) it only checks, and exits.
own_dockerd_prereqs() {
  # shellcheck disable=SC2154  # $repo is the caller's
  [ -n "${CHECK_DEPS_ONLY:-}" ] || "$repo/hack/host-deps.sh" install
  need cmd:debootstrap "apt-get install -y debootstrap"
  need cmd:dockerd "apt-get install -y docker.io"
  need cmd:docker "apt-get install -y docker.io"
  need "file:$HOST_CA" "apt-get install -y ca-certificates"
  deps_checked
  [ -x "$DOCKER_BIN" ] || DOCKER_BIN=$(command -v docker)
}

# The daemon for the rest of the calling script: started now (holding the lock), stopped at exit;
# an interrupt exits 130/143 through the same stop.
own_dockerd_session() {
  own_dockerd_start
  trap _own_dockerd_exit EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
}

_own_dockerd_exit() {
  local rc=$?
  trap - EXIT INT TERM
  own_dockerd_stop || rc=1
  log "total $((SECONDS - _own_dockerd_t0))s, exit $rc"
  exit "$rc"
}

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
  # OWN_DOCKERD_CPU_SHARES: the containers' cgroup v1 cpu weight (hack/test.sh: low, for a tier beside the lab's)
  if [ -n "${OWN_DOCKERD_CPU_SHARES:-}" ] && [ -w /sys/fs/cgroup/cpu/cgroup.procs ]; then
    mkdir -p /sys/fs/cgroup/cpu/skewsafe-controller
    echo "$OWN_DOCKERD_CPU_SHARES" >/sys/fs/cgroup/cpu/skewsafe-controller/cpu.shares
  fi
  nohup dockerd -H "unix://$OWN_DOCKERD_RUN/docker.sock" --data-root "$OWN_DOCKERD_RUN/data-root" \
    --exec-root "$OWN_DOCKERD_RUN/exec" --pidfile "$OWN_DOCKERD_RUN/docker.pid" --bridge=none \
    --iptables=false --ip-masq=false --ip-forward=false --storage-driver overlay2 \
    --cgroup-parent /skewsafe-controller >"$OWN_DOCKERD_RUN/dockerd.log" 2>&1 &
  for _i in $(seq 150); do odocker version >/dev/null 2>&1 && break; sleep 0.2; done
  odocker version >/dev/null 2>&1 || { tail -20 "$OWN_DOCKERD_RUN/dockerd.log" >&2; die "dockerd did not come up ($OWN_DOCKERD_RUN/dockerd.log)"; }
  log "own dockerd up (pid $(cat "$OWN_DOCKERD_RUN/docker.pid")), socket $OWN_DOCKERD_RUN/docker.sock"
}

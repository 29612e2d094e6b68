#!/usr/bin/env bash
# Tear the lab down: the repository server, every container of the lab dockerd (nodes, LB) with
# its volumes, the lab network, the own dockerd (and its containerd), the FORWARD rule and both
# bridges.
#   lab/down.sh           keep the dockerd data-root (loaded node image) for a faster next up
#   lab/down.sh --purge   also delete the data-root and all runtime state under $LAB_STATE
# Build caches under $LAB_CACHE (binaries, image tarballs, node/LB image tarballs, .debs and the
# repository) are always kept.
set -euo pipefail
# shellcheck source=lab/lib.sh
. "$(dirname "$0")/lib.sh"
t0=$SECONDS
"$LAB_DIR/repo-server.sh" stop
# A dockerd killed from outside (a reboot, a killed session) leaves its containers in the data-root, and
# the next start would bring the old nodes back with their restart policies: start it to remove them.
if ! "$LAB_DIR/dockerd.sh" status >/dev/null 2>&1 && [ -n "$(ls -A "$LAB_STATE/docker-root/containers" 2>/dev/null)" ]; then
  log "dockerd not running but its data-root holds containers: starting it to remove them"
  "$LAB_DIR/dockerd.sh" start
fi
if "$LAB_DIR/dockerd.sh" status >/dev/null 2>&1; then
  # the dockerd is the lab's own: everything in it is the lab's
  # runc on these cgroup v1 hosts can leave a container's init frozen (freezer.state FROZEN, the process in D state
  # in "refrigerator"; seen 2026-12-07 on a control plane after the faults story), and docker then cannot kill the
  # node that holds it ("did not receive an exit event"): thaw every cgroup of the lab first.
  frozen=$(find "/sys/fs/cgroup/freezer/$LAB_NAME" -name freezer.state -exec grep -l -x -e FROZEN -e FREEZING {} + \
    2>/dev/null || true)
  for f in $frozen; do echo THAWED >"$f"; done
  [ -z "$frozen" ] || log "thawed $(wc -w <<<"$frozen") frozen cgroup(s) of the lab"
  ids=$(ldocker ps -aq)
  if [ -n "$ids" ]; then
    # shellcheck disable=SC2086
    ldocker rm -f -v $ids >/dev/null
    log "removed containers: $(wc -w <<<"$ids")"
  fi
  ldocker volume prune -f >/dev/null
  ldocker network rm "$LAB_NET" >/dev/null 2>&1 || true
fi
"$LAB_DIR/dockerd.sh" stop
# nothing of ours may stay mounted
if grep -q " $LAB_STATE/" /proc/mounts; then
  grep " $LAB_STATE/" /proc/mounts | awk '{print $2}' | sort -r | xargs -r -n1 umount -l
  log "lazily unmounted leftovers under $LAB_STATE"
fi
if [ "${1:-}" = --purge ]; then rm -rf "$LAB_STATE"; log "purged $LAB_STATE"; fi
log "down in $((SECONDS - t0))s"

#!/usr/bin/env bash
# Start one node container the kind way on the lab network, with a pinned IP:
#   lab/run-node.sh NAME IP [IMAGE]      (IMAGE default: what lab/build-node-image.sh prints)
# Image tarballs ($LAB_CACHE/images) are mounted read-only at /lab/images (kubelet/kubeadm
# come from the lab apt repository: lab/install-k8s.sh). Idempotent: an existing running container of that name is kept. Waits for systemd `running`.
set -euo pipefail
# shellcheck source=lab/lib.sh
. "$(dirname "$0")/lib.sh"

name=${1:?usage: run-node.sh NAME IP [IMAGE]} ip=${2:?usage: run-node.sh NAME IP [IMAGE]}
image=${3:-$("$LAB_DIR/build-node-image.sh" | tail -1)}
"$LAB_DIR/dockerd.sh" status >/dev/null || die "lab dockerd not running: lab/dockerd.sh start"

if [ "$(ldocker inspect -f '{{.State.Running}}' "$name" 2>/dev/null)" = true ]; then
  log "$name already running"
else
  ldocker rm -f -v "$name" >/dev/null 2>&1 || true
  mods=(); [ -d /lib/modules ] && mods=(--volume /lib/modules:/lib/modules:ro)
  # kind's flags (provision.go); --volume /var makes the overlayfs snapshotter work (not overlay-on-overlay)
  ldocker run --name "$name" --hostname "$name" --detach --tty --net "$LAB_NET" --ip "$ip" \
    --restart=on-failure:1 --init=false --cgroupns=private --privileged \
    --security-opt seccomp=unconfined --security-opt apparmor=unconfined \
    --tmpfs /tmp --tmpfs /run --volume /var "${mods[@]}" \
    --volume "$LAB_CACHE/images:/lab/images:ro" \
    --label "$LAB_NAME.node=$name" "$image" 2>"$LAB_STATE/run-$name.err" >/dev/null \
    || { cat "$LAB_STATE/run-$name.err" >&2; die "docker run $name failed"; }
  # the lab dockerd runs with --ip-forward=false on purpose (no route out): drop its warning about it
  grep -v 'IPv4 forwarding is disabled' "$LAB_STATE/run-$name.err" >&2 || true
  rm -f "$LAB_STATE/run-$name.err"
fi
for _ in $(seq 300); do
  st=$(ldocker exec "$name" systemctl is-system-running 2>/dev/null || true)
  case "$st" in running) break ;; degraded) ldocker exec "$name" systemctl --failed --no-legend >&2; break ;; esac
  sleep 0.2
done
log "$name ($ip): systemd $st"
[ "$st" = running ] || [ "$st" = degraded ]

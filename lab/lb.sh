#!/usr/bin/env bash
# HA endpoint of the lab: haproxy (Debian's package) in its own container at $LAB_LB_IP,
# TCP 6443 -> every control plane's kube-apiserver, health-checked with GET /readyz over TLS
# (kubeadm's HA guide), stats page on :8404 (http://$LAB_LB_IP:8404/stats, ;csv for scripts).
#   lab/lb.sh [NAME=]CP_IP...   build the image if missing, write the config, start or reload
# The image is a debootstrap minbase with haproxy (cached tarball, loaded into the lab dockerd).
# Idempotent: a running LB whose config did not change is left alone; a changed config is
# reloaded in place (haproxy -W master, SIGUSR2), so connections to healthy backends survive.
set -euo pipefail
# shellcheck source=lab/lib.sh
. "$(dirname "$0")/lib.sh"
[ $# -gt 0 ] || { echo "usage: $0 [NAME=]CP_IP..." >&2; exit 2; }
"$LAB_DIR/dockerd.sh" status >/dev/null || die "lab dockerd not running: lab/dockerd.sh start"
name=$LAB_NAME-lb

# --- image ---
base="$LAB_CACHE/debian-$NODE_SUITE-haproxy-base.tar"
hash=$( { echo "$NODE_SUITE"; cat "$LAB_DIR/files/mkimage.py"; sed -n '/^# --- image ---/,/^# --- config ---/p' "$0"; } | sha256sum | cut -c1-12)
TAG="$LAB_NAME/haproxy:$NODE_SUITE-$hash"
OUT="$LAB_CACHE/node-images/haproxy-$NODE_SUITE-$hash.tar"
if [ ! -f "$OUT" ]; then
  lab_lock build-lb-image
  if [ ! -f "$OUT" ]; then
    mkdir -p "$(dirname "$OUT")"
    debootstrap_tar "$base" haproxy "$NODE_SUITE"
    python3 "$LAB_DIR/files/mkimage.py" --out "$OUT.tmp" --tag "$TAG" --layer "$base" \
      --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      --entrypoint '["/usr/sbin/haproxy", "-W", "-db", "-f", "/usr/local/etc/haproxy/haproxy.cfg"]' >/dev/null
    mv "$OUT.tmp" "$OUT"
    find "$(dirname "$OUT")" -maxdepth 1 -name "haproxy-$NODE_SUITE-*.tar" ! -name "$(basename "$OUT")" -delete
    log "$TAG: built $(du -h "$OUT" | cut -f1)"
  fi
fi
if ! ldocker image inspect "$TAG" >/dev/null 2>&1; then
  t0=$SECONDS; ldocker load -i "$OUT" >/dev/null; log "$TAG: loaded in $((SECONDS - t0))s"
fi

# --- config ---
CFG_DIR=$LAB_STATE/lb
mkdir -p "$CFG_DIR"
"$LAB_DIR/files/haproxy-cfg.sh" "$@" >"$CFG_DIR/haproxy.cfg.new"

if [ "$(ldocker inspect -f '{{.State.Running}}' "$name" 2>/dev/null)" = true ]; then
  if cmp -s "$CFG_DIR/haproxy.cfg.new" "$CFG_DIR/haproxy.cfg" && [ "$(ldocker inspect -f '{{.Config.Image}}' "$name")" = "$TAG" ]; then
    rm "$CFG_DIR/haproxy.cfg.new"; log "$name ($LAB_LB_IP) running, config unchanged"
  elif [ "$(ldocker inspect -f '{{.Config.Image}}' "$name")" = "$TAG" ]; then
    mv "$CFG_DIR/haproxy.cfg.new" "$CFG_DIR/haproxy.cfg"
    ldocker kill -s USR2 "$name" >/dev/null; log "$name: config reloaded ($# backends)"
  else
    ldocker rm -f "$name" >/dev/null
  fi
fi
if [ "$(ldocker inspect -f '{{.State.Running}}' "$name" 2>/dev/null)" != true ]; then
  ldocker rm -f "$name" >/dev/null 2>&1 || true
  mv "$CFG_DIR/haproxy.cfg.new" "$CFG_DIR/haproxy.cfg"
  ldocker run --name "$name" --hostname "$name" --detach --net "$LAB_NET" --ip "$LAB_LB_IP" \
    --restart=unless-stopped --volume "$CFG_DIR:/usr/local/etc/haproxy:ro" \
    --label "$LAB_NAME.lb=$name" "$TAG" 2>&1 >/dev/null | { grep -v 'IPv4 forwarding is disabled' >&2 || true; }
  [ "${PIPESTATUS[0]}" = 0 ] || die "docker run $name failed"
  for _ in $(seq 50); do curl -fsS -o /dev/null "http://$LAB_LB_IP:8404/stats" 2>/dev/null && break; sleep 0.1; done
  curl -fsS -o /dev/null "http://$LAB_LB_IP:8404/stats" || { ldocker logs "$name" >&2; die "$name did not come up"; }
  log "$name ($LAB_LB_IP): haproxy up, backends $*"
fi

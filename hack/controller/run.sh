#!/usr/bin/env bash
# Tier `newer-core`: prove the collection on the newest ansible-core (hack/controller/versions.env)
# in an EE-like controller container, next to the host's ansible-core 2.19 / Python 3.11.
#
#   hack/controller/run.sh            build (cached) + run sanity and unit tests; exit != 0 on failure
#   CONTROLLER_KEEP_OLD=1 ...         keep images/caches of other pins (default: prune them)
#
# What it does:
# 1. Debian trixie rootfs (debootstrap, via lab/lib.sh debootstrap_tar) -> `docker import`; then a
#    venv /opt/venv with ansible-core + the unit-test pins of tests/requirements-dev.txt is
#    installed in a container and committed. Rootfs tar and image are cached by (suite, packages,
#    ansible-core, unit pins) under ~/.cache/skewsafe/controller (image: in the own data-root).
# 2. Runs hack/controller/in-container.sh with the repository mounted read-only at /src:
#    `ansible --version`, `ansible-test sanity --venv --python 3.13`, `pytest tests/unit`.
#    ansible-test's venvs persist in the cache (per image), so a second run is fast.
# Docker: an OWN dockerd (socket, data-root, exec-root, pidfile under
# ~/.cache/skewsafe/controller/run), no bridge, no iptables; containers use --network host (PyPI).
# It is stopped on exit. The host's CA bundle is bind-mounted (TLS-intercepting egress proxy).
# Fresh machine: installs the host packages (hack/host-deps.sh) if missing.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=lab/lib.sh
. "$repo/lab/lib.sh"
# shellcheck source=hack/controller/versions.env
. "$here/versions.env"
# shellcheck source=hack/own-dockerd.sh
. "$repo/hack/own-dockerd.sh"
# shellcheck source=hack/env.sh
. "$repo/hack/env.sh"

CTRL_CACHE=${SKEWSAFE_CACHE:-$HOME/.cache/skewsafe}/controller
OWN_DOCKERD_RUN=$CTRL_CACHE/run
# debootstrap_tar (lab/lib.sh) keeps its scratch rootfs and .debs under $LAB_CACHE: use ours.
# shellcheck disable=SC2034  # read by debootstrap_tar (ansible-test's shellcheck does not follow sources)
LAB_CACHE=$CTRL_CACHE

# ------------------------------------------------------------------ prerequisites
own_dockerd_prereqs

own_dockerd_session # one run at a time: holds the lock until this script exits

# ------------------------------------------------------------------ image (cached)
# The venv recipe (part of the image key, so changing it rebuilds the image).
# shellcheck disable=SC2016  # expanded in the container; $1 = ansible-core version, $2.. = unit pins
build_cmd='set -eu
core=$1; shift
python3 -m venv /opt/venv
/opt/venv/bin/pip install --disable-pip-version-check -q "ansible-core==$core" "$@"
/opt/venv/bin/pip check
rm -rf /tmp/*'
unit_pins=$(grep -iE '^(pytest|kubernetes|PyYAML|jmespath)==' "$repo/tests/requirements-dev.txt" | sort)
[ "$(wc -l <<<"$unit_pins")" -eq 4 ] || die "unit-test pins not found in tests/requirements-dev.txt"
rootfs_key=$(printf '%s\n' "$CONTROLLER_SUITE" "$CONTROLLER_PACKAGES" | sha256sum | cut -c1-10)
rootfs_tar=$CTRL_CACHE/rootfs-$CONTROLLER_SUITE-$rootfs_key.tar
image_key=$(printf '%s\n' "$rootfs_key" "$CONTROLLER_ANSIBLE_CORE" "$unit_pins" "$build_cmd" "$CONTROLLER_IMAGE_REV" |
  sha256sum | cut -c1-10)
image=skewsafe-controller:$CONTROLLER_SUITE-core$CONTROLLER_ANSIBLE_CORE-$image_key

# Environment for pip in the containers: the host's CA bundle (this VM's egress proxy re-signs
# TLS; without it pip fails with CERTIFICATE_VERIFY_FAILED) and the host's index/proxy settings.
# Given to the build as `env K=V` (not -e) so that none of it is committed into the image.
ca_args=() env_kv=()
if [ -f "$HOST_CA" ]; then
  c=/etc/ssl/certs/ca-certificates.crt
  ca_args=(-v "$HOST_CA:$c:ro")
  env_kv=("PIP_CERT=$c" "SSL_CERT_FILE=$c" "REQUESTS_CA_BUNDLE=$c")
fi
for v in PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_TRUSTED_HOST PIP_DEFAULT_TIMEOUT \
  HTTP_PROXY HTTPS_PROXY NO_PROXY http_proxy https_proxy no_proxy; do
  if [ -n "${!v:-}" ]; then env_kv+=("$v=${!v}"); fi
done
env_args=()
for kv in "${env_kv[@]}"; do env_args+=(-e "$kv"); done
mkdir -p "$CTRL_CACHE/pip-cache"

if odocker image inspect "$image" >/dev/null 2>&1; then
  log "image $image (cached)"
else
  t0=$SECONDS
  debootstrap_tar "$rootfs_tar" "$CONTROLLER_PACKAGES" "$CONTROLLER_SUITE"
  base=skewsafe-controller-rootfs:$CONTROLLER_SUITE-$rootfs_key
  odocker image inspect "$base" >/dev/null 2>&1 || odocker import "$rootfs_tar" "$base" >/dev/null
  log "imported $base"
  # shellcheck disable=SC2086  # unit_pins: one word per pin
  cid=$(odocker create --network host "${ca_args[@]}" -v "$CTRL_CACHE/pip-cache:/root/.cache/pip" \
    "$base" env "${env_kv[@]}" /bin/sh -c "$build_cmd" sh "$CONTROLLER_ANSIBLE_CORE" $unit_pins)
  if ! odocker start -a "$cid"; then odocker rm -f "$cid" >/dev/null; die "venv install failed"; fi
  odocker commit \
    --change 'ENV PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' --change 'ENV LC_ALL=C.UTF-8' --change 'ENV HOME=/root' \
    --change 'WORKDIR /root' --change 'CMD ["/bin/bash"]' "$cid" "$image" >/dev/null
  odocker rm "$cid" >/dev/null
  log "built $image in $((SECONDS - t0))s"
fi

# other pins' images, rootfs tars and ansible-test caches are dead weight
if [ -z "${CONTROLLER_KEEP_OLD:-}" ]; then
  odocker images --format '{{.Repository}}:{{.Tag}}' |
    grep -E '^skewsafe-controller(-rootfs)?:' | grep -vxF -e "$image" \
    -e "skewsafe-controller-rootfs:$CONTROLLER_SUITE-$rootfs_key" | xargs -r "$DOCKER_BIN" -H "unix://$OWN_DOCKERD_RUN/docker.sock" rmi >/dev/null || true
  find "$CTRL_CACHE" -maxdepth 1 -name 'rootfs-*.tar' ! -name "${rootfs_tar##*/}" -delete
  find "$CTRL_CACHE/ansible-test" -mindepth 1 -maxdepth 1 ! -name "$image_key" -exec rm -rf {} + 2>/dev/null || true
fi

# ------------------------------------------------------------------ run the tests
# The collection's dependency (galaxy.yml): the kubernetes.core the tool venv's ansible package carries, read-only,
# as an operator would install it next to a newer ansible-core (the tests that run ansible-playbook resolve its modules).
k8s_core=$(find "$VENV"/lib/python3*/site-packages/ansible_collections/kubernetes -maxdepth 1 -name core -type d 2>/dev/null | head -n 1)
[ -n "$k8s_core" ] || die "kubernetes.core not found in the tool venv $VENV (TIERS=setup hack/test.sh installs it)"
at_cache=$CTRL_CACHE/ansible-test/$image_key
mkdir -p "$at_cache"
log "running ${NEWER_CORE_PARTS:-sanity units} with ansible-core $CONTROLLER_ANSIBLE_CORE (python $CONTROLLER_PYTHON)"
rc=0
odocker run --rm --network host --name "skewsafe-controller-$$" "${ca_args[@]}" "${env_args[@]}" \
  -v "$repo:/src:ro" -v "$at_cache:/root/.ansible/test" -v "$CTRL_CACHE/pip-cache:/root/.cache/pip" \
  -v "$k8s_core:/deps/ansible_collections/kubernetes/core:ro" \
  -e CONTROLLER_PYTHON="$CONTROLLER_PYTHON" -e NEWER_CORE_PARTS="${NEWER_CORE_PARTS:-sanity units}" \
  "$image" bash /src/hack/controller/in-container.sh || rc=$?
log "newer-core (ansible-core $CONTROLLER_ANSIBLE_CORE): $([ $rc -eq 0 ] && echo passed || echo "FAILED (exit $rc)")"
exit "$rc"

#!/usr/bin/env bash
# The execution environment (EE) AWX and ansible-navigator users run: built with ansible-builder
# from docs/awx/execution-environment.yml on a base image made here (no registry is reachable),
# then used through ansible-navigator.
#
#   hack/ee/run.sh build            build the image (cached by its inputs); print its tag
#   hack/ee/run.sh exec -- CMD...   build, then run CMD on the host with DOCKER_HOST pointing at
#                                   the own dockerd and EE_IMAGE set to the image's tag
#
# How the image is made (measured to work with ansible-builder 3.2.0 on Debian trixie):
# 1. Base: a Debian trixie minbase rootfs (python3, python3-venv, openssh-client, ca-certificates)
#    with a venv at /opt/venv. A venv, because ansible-builder's pip_install step runs
#    `python -m ensurepip`, which Debian disables for the system Python. The host's CA bundle is
#    baked in (PIP_CERT): this machine's egress proxy re-signs TLS. Lab-only; never pushed.
# 2. Definition: hack/ee/definition.py rewrites docs/awx/execution-environment.yml for that base
#    (base image, python_path, apt-get, no package-cache clean) and for offline collections (this
#    collection's tarball and kubernetes.core from the `ansible` package, `--offline`).
# 3. `ansible-builder build --container-runtime docker --extra-build-cli-args "--network host"`
#    (docker's classic builder: Debian's docker.io has no buildx).
# 4. The image is checked: ansible-core, ansible-runner, both collections, the kubernetes client,
#    and none of the test tooling (pytest, ansible-lint, molecule, ansible-test's own copies).
# The dockerd is the project's own (hack/own-dockerd.sh, shared with the newer-core tier).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=lab/lib.sh
. "$repo/lab/lib.sh"
# shellcheck source=hack/controller/versions.env
. "$repo/hack/controller/versions.env"
# shellcheck source=hack/own-dockerd.sh
. "$repo/hack/own-dockerd.sh"
# shellcheck source=hack/env.sh
. "$repo/hack/env.sh"

EE_CACHE=$CACHE/ee
OWN_DOCKERD_RUN=$CACHE/controller/run
# shellcheck disable=SC2034  # read by debootstrap_tar
LAB_CACHE=$EE_CACHE
EE_SUITE=$CONTROLLER_SUITE
EE_PACKAGES=python3,python3-venv,openssh-client,ca-certificates

own_dockerd_prereqs

mode=${1:-}
case $mode in
  build) ;;
  exec) shift; [ "${1:-}" = -- ] && shift; [ $# -gt 0 ] || die "usage: $0 exec -- CMD..." ;;
  *) echo "usage: $0 build | exec -- CMD..." >&2; exit 2 ;;
esac
[ -f "$VENV/.complete" ] || TIERS=setup "$repo/hack/test.sh" >/dev/null || die "the tool venv could not be set up (TIERS=setup hack/test.sh)"
mkdir -p "$EE_CACHE"

own_dockerd_session # one run at a time: holds the lock until this script exits

# ------------------------------------------------------------------ base image (cached)
base_recipe='set -eu
python3 -m venv /opt/venv
cp /host-ca.crt /etc/ssl/certs/ca-certificates.crt'
base_key=$(printf '%s\n' "$EE_SUITE" "$EE_PACKAGES" "$base_recipe" "$(sha256sum <"$HOST_CA")" | sha256sum | cut -c1-10)
base=skewsafe-ee-base:$EE_SUITE-$base_key
if odocker image inspect "$base" >/dev/null 2>&1; then
  log "base $base (cached)"
else
  rootfs=$EE_CACHE/rootfs-$EE_SUITE-$(printf '%s\n' "$EE_SUITE" "$EE_PACKAGES" | sha256sum | cut -c1-10).tar
  debootstrap_tar "$rootfs" "$EE_PACKAGES" "$EE_SUITE"
  odocker import "$rootfs" "$base-rootfs" >/dev/null
  cid=$(odocker create -v "$HOST_CA:/host-ca.crt:ro" "$base-rootfs" /bin/sh -c "$base_recipe")
  odocker start -a "$cid" || { odocker rm -f "$cid" >/dev/null; die "base image recipe failed"; }
  odocker commit \
    --change 'ENV PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt' \
    --change 'ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt' \
    --change 'ENV LANG=C.UTF-8' --change 'CMD ["/bin/bash"]' "$cid" "$base" >/dev/null
  odocker rm "$cid" >/dev/null
  odocker rmi "$base-rootfs" >/dev/null
  log "built $base"
fi

# ------------------------------------------------------------------ collections, definition
ctx=$EE_CACHE/context
rm -rf "$ctx" "$EE_CACHE/collections" && mkdir -p "$EE_CACHE/collections"
(cd "$repo" && "$VENV/bin/ansible-galaxy" collection build --output-path "$EE_CACHE/collections" . >/dev/null)
# kubernetes.core as the `ansible` package installed it into the tool venv
kcore=$(PYTHONPATH='' "$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/ansible_collections/kubernetes/core
"$VENV/bin/python" "$here/repack_collection.py" "$kcore" "$EE_CACHE/collections" >/dev/null
# Builds have no network here (docker 20.10's classic builder ignores --network host), so pip in
# the build installs from a wheel directory in the context: every requirement the generated
# Containerfile installs (ansible-core/runner, its builder tools, the collections' introspected
# requirements), downloaded on the host for the image's Python and cached by that list.
offline=$EE_CACHE/offline
mkdir -p "$offline/wheels"
printf '[global]\nno-index = true\nfind-links = /offline/wheels\n' >"$offline/pip.conf"
definition() {
  "$VENV/bin/python" "$here/definition.py" --base "$base" --ansible-core "$CONTROLLER_ANSIBLE_CORE" \
    --collections "$EE_CACHE/collections" --offline "$offline" "$repo/docs/awx/execution-environment.yml" \
    >"$EE_CACHE/execution-environment.yml"
}
definition
rm -rf "$EE_CACHE/introspect" && mkdir -p "$EE_CACHE/introspect"
# (only that path: with the checkout's or the venv's copies in sight, nothing would be installed)
ANSIBLE_COLLECTIONS_PATH="$EE_CACHE/introspect" PYTHONPATH='' "$VENV/bin/ansible-galaxy" collection install --force --offline -p "$EE_CACHE/introspect" "$EE_CACHE"/collections/*.tar.gz >/dev/null
{
  "$VENV/bin/ansible-builder" introspect "$EE_CACHE/introspect" |
    "$VENV/bin/python" -c 'import sys, yaml; [print(r.split("#")[0].strip()) for r in (yaml.safe_load(sys.stdin) or {}).get("python", [])]'
  "$VENV/bin/ansible-builder" create -f "$EE_CACHE/execution-environment.yml" -c "$ctx" --output-filename Containerfile >/dev/null
  sed -n 's/^ARG ANSIBLE_INSTALL_REFS="\(.*\)"$/\1/p' "$ctx/Containerfile" | tr ' ' '\n'
  # shellcheck disable=SC2016  # a literal $PYCMD in the Containerfile
  sed -n 's/^RUN \$PYCMD -m pip install --no-cache-dir \([^$]*\)$/\1/p' "$ctx/Containerfile" | tr ' ' '\n' | tr -d "'"
} | sed '/^$/d' | sort -u >"$EE_CACHE/requirements.txt"
grep -q '^kubernetes' "$EE_CACHE/requirements.txt" || die "introspection found no kubernetes requirement in $EE_CACHE/introspect"
wheels_key=$(sha256sum <"$EE_CACHE/requirements.txt" | cut -c1-12)
if [ ! -f "$offline/wheels/.$wheels_key" ]; then
  rm -rf "$offline/wheels" && mkdir -p "$offline/wheels"
  py=${CONTROLLER_PYTHON/./}
  "$VENV/bin/pip" download -q --disable-pip-version-check --dest "$offline/wheels" --only-binary=:all: \
    --python-version "$CONTROLLER_PYTHON" --implementation cp --abi "cp$py" --abi abi3 --abi none \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux_2_28_x86_64 \
    --platform linux_x86_64 -r "$EE_CACHE/requirements.txt" || die "pip download of the EE's wheels failed"
  touch "$offline/wheels/.$wheels_key"
  log "downloaded $(find "$offline/wheels" -name '*.whl' | wc -l) wheels for: $(tr '\n' ' ' <"$EE_CACHE/requirements.txt")"
fi

# The image is keyed by what goes into it (definition, collection contents, base).
# (A collection tarball embeds build times; hash its members' contents instead.)
content_key() { tar -xzOf "$1" | sha256sum | cut -c1-16; }
key=$( {
  cat "$EE_CACHE/execution-environment.yml" "$offline/pip.conf"
  ls "$offline/wheels"
  for t in "$EE_CACHE"/collections/*.tar.gz; do echo "${t##*/} $(content_key "$t")"; done
  "$VENV/bin/ansible-builder" --version
} | sha256sum | cut -c1-12)
image=skewsafe-kubeadm-ee:$key

if odocker image inspect "$image" >/dev/null 2>&1; then
  log "image $image (cached)"
else
  t0=$SECONDS
  rm -rf "$ctx" # ansible-builder rewrites changed files in a context but keeps stale ones
  log "ansible-builder build -> $image (log: $EE_CACHE/build.log)"
  if ! DOCKER_HOST="unix://$OWN_DOCKERD_RUN/docker.sock" DOCKER_BUILDKIT=0 \
    "$VENV/bin/ansible-builder" build --container-runtime docker -f "$EE_CACHE/execution-environment.yml" \
    -c "$ctx" -t "$image" --extra-build-cli-args "--network host" -v 2 >"$EE_CACHE/build.log" 2>&1; then
    tail -40 "$EE_CACHE/build.log" >&2
    die "ansible-builder build failed ($EE_CACHE/build.log)"
  fi
  log "built $image in $((SECONDS - t0))s"
  # what an operator's EE must hold, and none of the test tooling
  # shellcheck disable=SC2016  # expanded in the container
  odocker run --rm --network none "$image" bash -c '
    set -e
    ansible --version | head -1
    ansible-runner --version
    listed=$(ansible-galaxy collection list 2>/dev/null)
    for c in skewsafe.kubeadm kubernetes.core; do grep -E "^$c " <<<"$listed" || { echo "collection missing: $c"; exit 1; }; done
    python3 -c "import kubernetes, yaml, urllib3; print(\"kubernetes\", kubernetes.__version__)"
    for tool in pytest ansible-lint molecule ruff; do
      if command -v "$tool" >/dev/null || python3 -c "import ${tool//-/_}" 2>/dev/null; then
        echo "test tooling in the EE: $tool"; exit 1
      fi
    done' >"$EE_CACHE/contents.txt" 2>&1 || { cat "$EE_CACHE/contents.txt" >&2; odocker rmi "$image" >/dev/null; die "the image lacks what it must hold"; }
  sed 's/^/  /' "$EE_CACHE/contents.txt"
  odocker image prune -f >/dev/null # the builder stages
fi
# other keys' images are dead weight
odocker images --format '{{.Repository}}:{{.Tag}}' | grep -E '^skewsafe-kubeadm-ee:' | grep -vxF "$image" |
  xargs -r "$DOCKER_BIN" -H "unix://$OWN_DOCKERD_RUN/docker.sock" rmi >/dev/null || true

case $mode in
  build) echo "$image" ;;
  # without hack/env.sh's Ansible settings: navigator passes ANSIBLE_* on into the EE
  exec) env -u ANSIBLE_HOME -u ANSIBLE_LOCAL_TEMP -u ANSIBLE_COLLECTIONS_PATH -u PYTHONPATH \
    DOCKER_HOST="unix://$OWN_DOCKERD_RUN/docker.sock" EE_IMAGE="$image" "$@" ;;
esac

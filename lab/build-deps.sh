#!/usr/bin/env bash
# Build the node runtime from the Go module proxy, cached by version:
#   containerd (containerd, containerd-shim-runc-v2, ctr), runc (cgo + libseccomp, static),
#   crictl, CNI plugins (bridge, host-local, loopback, portmap), and CoreDNS at the versions
#   kubeadm deploys for each Kubernetes version given (default K8S_OLD_VERSION K8S_NEW_VERSION;
#   BUILD_COREDNS=0 leaves CoreDNS out, and the lab then runs without it).
#
#   lab/build-deps.sh [K8S_VERSION ...]   -> $LAB_CACHE/<name>-<version>/bin/*
#
# Each component gets a tiny module that requires the upstream module at the pinned
# version (as hack/build-upstream.sh does for k8s.io/kubernetes), so MVS picks exactly
# upstream's dependency versions. None of these modules has replace directives today;
# the script checks that and fails if one appears.
# Host needs: go (GOTOOLCHAIN=local), gcc, libseccomp-dev, libc6-dev (static libs).
set -euo pipefail
# shellcheck source=lab/lib.sh
. "$(dirname "$0")/lib.sh"
export GOFLAGS=-mod=mod
NICE=${NICE:-nice -n 10}

need cmd:go "the Go toolchain (go on PATH)"
need cmd:python3 "Python 3"
# runc: cgo is mandatory (nsenter); seccomp via libseccomp-dev, linked statically like upstream's release.
need cmd:gcc "apt-get install -y gcc"
need file:/usr/lib/x86_64-linux-gnu/libseccomp.a "apt-get install -y libseccomp-dev"
need file:/usr/lib/x86_64-linux-gnu/libc.a "apt-get install -y libc6-dev"
deps_checked

# tiny_module NAME VERSION MODULE -> prints the module dir
tiny_module() {
  local name=$1 ver=$2 mod=$3 dir gomod goline
  dir="$LAB_CACHE/$name-$ver/src"
  mkdir -p "$dir"
  gomod=$(go mod download -json "$mod@v$ver" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get("GoMod") or sys.exit(d.get("Error")))') \
    || die "$mod@v$ver is not on the Go module proxy"
  if grep -qE '^\s*replace|=>' "$gomod"; then die "$mod@v$ver has replace directives; pin them in tiny_module"; fi
  goline=$(grep -E '^go [0-9]' "$gomod")
  printf 'module skewsafe.invalid/lab/%s\n\n%s\n\nrequire %s v%s\n' "$name" "$goline" "$mod" "$ver" >"$dir/go.mod.new"
  if ! cmp -s "$dir/go.mod.new" "$dir/go.mod"; then mv "$dir/go.mod.new" "$dir/go.mod"; rm -f "$dir/go.sum"; else rm "$dir/go.mod.new"; fi
  echo "$dir"
}

have_all() { # DIR BIN...
  local d=$1; shift
  for b in "$@"; do [ -x "$d/$b" ] || return 1; done
}

# build NAME VERSION MODULE "BINS" -- go build args (packages last)
build() {
  local name=$1 ver=$2 mod=$3 bins=$4; shift 5
  local out="$LAB_CACHE/$name-$ver/bin" src t0=$SECONDS
  # shellcheck disable=SC2086
  if have_all "$out" $bins; then log "$name v$ver: cached in $out"; return; fi
  log "$name v$ver: building $bins"
  src=$(tiny_module "$name" "$ver" "$mod")
  rm -rf "$out.tmp"; mkdir -p "$out.tmp"
  (cd "$src" && $NICE go build -trimpath -o "$out.tmp/" "$@")
  rm -rf "$out"; mv "$out.tmp" "$out"
  log "$name v$ver: built in $((SECONDS - t0))s"
}

lab_lock build-deps   # concurrent runs would race on the same output files
start=$SECONDS

CTRD=github.com/containerd/containerd/v2
CGO_ENABLED=0 build containerd "$CONTAINERD_VERSION" "$CTRD" "containerd containerd-shim-runc-v2 ctr" -- \
  -tags "urfave_cli_no_docs no_btrfs osusergo netgo" \
  -ldflags "-s -w -X $CTRD/version.Version=v$CONTAINERD_VERSION -X $CTRD/version.Revision=go-module-v$CONTAINERD_VERSION -X $CTRD/version.Package=$CTRD" \
  "$CTRD/cmd/containerd" "$CTRD/cmd/containerd-shim-runc-v2" "$CTRD/cmd/ctr"

CGO_ENABLED=1 build runc "$RUNC_VERSION" github.com/opencontainers/runc "runc" -- \
  -tags "seccomp urfave_cli_no_docs netgo osusergo" \
  -ldflags "-s -w -X main.gitCommit=go-module-v$RUNC_VERSION -extldflags -static" \
  github.com/opencontainers/runc

CGO_ENABLED=0 build crictl "$CRICTL_VERSION" sigs.k8s.io/cri-tools "crictl" -- \
  -ldflags "-s -w -X sigs.k8s.io/cri-tools/pkg/version.Version=v$CRICTL_VERSION" \
  sigs.k8s.io/cri-tools/cmd/crictl

CNI=github.com/containernetworking/plugins
CGO_ENABLED=0 build cni-plugins "$CNI_PLUGINS_VERSION" "$CNI" "bridge host-local loopback portmap" -- \
  -ldflags "-s -w -X $CNI/pkg/utils/buildversion.BuildVersion=v$CNI_PLUGINS_VERSION" \
  "$CNI/plugins/main/bridge" "$CNI/plugins/ipam/host-local" "$CNI/plugins/main/loopback" "$CNI/plugins/meta/portmap"

# CoreDNS for each Kubernetes version the lab runs (kubeadm's CoreDNSVersion); BUILD_COREDNS=0 leaves it out.
if [ "${BUILD_COREDNS:-1}" = 1 ]; then
  versions=("$@")
  [ ${#versions[@]} -gt 0 ] || versions=("$K8S_OLD_VERSION" "$K8S_NEW_VERSION")
  for kv in "${versions[@]}"; do
    cv=$(kubeadm_const "$kv" CoreDNSVersion); cv=${cv#v}
    [ -n "$cv" ] || die "no CoreDNSVersion in kubeadm v$kv constants"
    CGO_ENABLED=0 build coredns "$cv" github.com/coredns/coredns "coredns" -- \
      -ldflags "-s -w -X github.com/coredns/coredns/coremain.GitCommit=go-module-v$cv" \
      github.com/coredns/coredns
  done
fi

# sanity: every binary reports the pinned version (capture first: grep -q + pipefail = SIGPIPE)
b=$LAB_CACHE
v=$("$b/containerd-$CONTAINERD_VERSION/bin/containerd" --version); [[ $v == *"v$CONTAINERD_VERSION"* ]] || die "containerd version stamp: $v"
v=$("$b/runc-$RUNC_VERSION/bin/runc" --version); [[ $v == *"runc version $RUNC_VERSION"* ]] || die "runc version: $v"
[[ $v == *"libseccomp: "* ]] || die "runc built without seccomp"
v=$("$b/crictl-$CRICTL_VERSION/bin/crictl" --version); [[ $v == *"v$CRICTL_VERSION"* ]] || die "crictl version stamp: $v"
v=$("$b/cni-plugins-$CNI_PLUGINS_VERSION/bin/bridge" </dev/null 2>&1 || true); [[ $v == *"v$CNI_PLUGINS_VERSION"* ]] || die "CNI version stamp: $v"
log "all done in $((SECONDS - start))s"

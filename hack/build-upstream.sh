#!/usr/bin/env bash
# Build real upstream Kubernetes and etcd binaries from the official Go modules.
#
#   hack/build-upstream.sh                  what `make test` needs: every command of the lab's
#                                           K8S_OLD_VERSION and K8S_NEW_VERSION, and kube-apiserver,
#                                           kubeadm, kube-controller-manager and kube-scheduler of the
#                                           other K8S_HARNESS_VERSIONS
#   hack/build-upstream.sh VERSION ...       every command of these versions (a lab at VERSION)
#   hack/build-upstream.sh --harness VERSION ...
#                                           only what the harness runs of these versions (kube-apiserver,
#                                           kubeadm, kube-controller-manager, kube-scheduler) and their etcd
#
# k8s.io/kubernetes is not meant to be a dependency: its go.mod points every
# k8s.io/<staging> module at ./staging/..., which a consumer cannot see. So each
# version gets a tiny module that requires k8s.io/kubernetes vX.Y.Z and replaces
# each staging module with its published v0.Y.Z, then builds the commands with the
# same version stamps upstream's hack/lib/version.sh sets (kubeadm refuses
# unstamped binaries). Results are cached by version under $SKEWSAFE_CACHE.
#
# Go toolchain: each build runs with the local go unless the go.mod it builds (k8s.io/kubernetes's,
# or etcd's server module) has a newer `go` line; then with the toolchain versions.env pins for that
# Go minor (GO_TOOLCHAIN_1_<minor>), which the go command fetches once from the Go module proxy
# (golang.org/toolchain). No pin, no build: never any other toolchain.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=versions.env
set -a; . "$here/versions.env"; set +a
export GOTOOLCHAIN GOFLAGS=-mod=mod CGO_ENABLED=0
CACHE=${SKEWSAFE_CACHE:-$HOME/.cache/skewsafe}
K8S_CMDS=(kube-apiserver kubeadm kubectl kubelet kube-controller-manager kube-scheduler kube-proxy)
# What the harness runs of a version (tests/harness): kubeadm renders, kube-apiserver serves; the
# controller-manager and scheduler only answer hack/feature_gates.py (which gates each version refuses).
HARNESS_CMDS=(kube-apiserver kubeadm kube-controller-manager kube-scheduler)

log() { printf '[build-upstream %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# shellcheck source=hack/deps.sh
. "$here/deps.sh"
need cmd:go "the Go toolchain (go on PATH)"
need cmd:python3 "Python 3"
deps_checked
LOCAL_GO=$(GOTOOLCHAIN=local go env GOVERSION); LOCAL_GO=${LOCAL_GO#go}

version_le() { printf '%s\n' "$1" "$2" | sort -V -C; }  # version_le A B: A <= B

# The GOTOOLCHAIN value a go.mod needs (see the header); prints "local" or the pin.
go_toolchain_for() {
  local gomod=$1 need pin_var pin
  need=$(sed -nE 's/^go ([0-9][0-9.]*)\s*$/\1/p' "$gomod")
  [ -n "$need" ] || die "no go line in $gomod"
  if version_le "$need" "$LOCAL_GO"; then echo local; return; fi
  pin_var="GO_TOOLCHAIN_$(cut -d. -f1-2 <<<"$need" | tr . _)"; pin=${!pin_var:-}
  [ -n "$pin" ] || die "$gomod needs go $need, newer than the local go$LOCAL_GO, and hack/versions.env has no $pin_var"
  version_le "$need" "${pin#go}" || die "$gomod needs go $need but $pin_var=$pin"
  echo "$pin"
}

# The go.mod of a module version, fetched by the local go. A go older than the module's go line
# still fetches it and only then reports "requires go >= ...": the go line is read from it afterwards.
module_gomod() {
  { GOTOOLCHAIN=local go mod download -json "$1" || true; } | python3 -c '
import json, os, sys
d = json.load(sys.stdin)
mod, err = d.get("GoMod"), d.get("Error")
if not mod or not os.path.isfile(mod) or (err and "requires go >=" not in err):
    sys.exit(err or "no go.mod")
print(mod)'
}

# Module directory with go.mod for one k8s version; prints its path. MOD: k8s.io/kubernetes's go.mod.
k8s_module() {
  local v=$1 mod=$2 src
  src="$CACHE/src/kubernetes-v$v"
  mkdir -p "$src"
  {
    echo "module skewsafe.invalid/build/kubernetes"
    echo
    grep -E '^go [0-9]' "$mod"
    echo
    echo "require k8s.io/kubernetes v$v"
    echo
    echo "replace ("
    # every "k8s.io/x => ./staging/src/k8s.io/x" becomes "k8s.io/x => k8s.io/x v0.<minor>.<patch>[-<pre>]"
    # (1.38.0-beta.0 -> v0.38.0-beta.0)
    sed -nE 's#^\s*(k8s\.io/[^ ]+) => \./staging/src/k8s\.io/[^ ]+\s*$#\t\1 => \1 v0.'"${v#*.}"'#p' "$mod"
    echo ")"
  } >"$src/go.mod.new"
  grep -q 'k8s.io/api => k8s.io/api v0' "$src/go.mod.new" || die "no staging replaces found in $mod"
  if ! cmp -s "$src/go.mod.new" "$src/go.mod"; then mv "$src/go.mod.new" "$src/go.mod"; rm -f "$src/go.sum"; else rm "$src/go.mod.new"; fi
  echo "$src"
}

check_etcd_pin() {
  local v=$1 minor pin consts want
  minor=$(cut -d. -f2 <<<"$v")
  pin_var="ETCD_VERSION_1_$minor"; pin=${!pin_var:-}
  [ -n "$pin" ] || die "no $pin_var in hack/versions.env"
  consts="$(go env GOMODCACHE)/k8s.io/kubernetes@v$v/cmd/kubeadm/app/constants/constants.go"
  want=$(sed -n 's/^\s*DefaultEtcdVersion = "\([0-9.]*\)-0"/\1/p' "$consts")
  [ "$want" = "$pin" ] || die "$pin_var=$pin but kubeadm v$v expects etcd $want (DefaultEtcdVersion)"
  echo "$pin"
}

build_k8s() {  # build_k8s VERSION COMMAND...
  local v=$1 out="$CACHE/k8s/v$1/bin" mod tc src date ldflags missing=() c
  shift
  for c in "$@"; do [ -x "$out/$c" ] || missing+=("$c"); done
  if [ ${#missing[@]} -eq 0 ]; then log "kubernetes v$v: cached in $out"; return; fi
  mod=$(module_gomod "k8s.io/kubernetes@v$v") \
    || die "k8s.io/kubernetes@v$v is not available from the Go module proxy"
  tc=$(go_toolchain_for "$mod")
  local -x GOTOOLCHAIN=$tc
  log "kubernetes v$v: building ${missing[*]} with GOTOOLCHAIN=$GOTOOLCHAIN (first build downloads modules and takes many minutes on 2 cores)"
  # with the chosen toolchain (a pinned one is fetched here, once): it must read the module too
  go mod download "k8s.io/kubernetes@v$v" || die "k8s.io/kubernetes@v$v: go mod download failed with GOTOOLCHAIN=$GOTOOLCHAIN"
  src=$(k8s_module "$v" "$mod")
  date=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["Time"])' \
    "$(go env GOMODCACHE)/cache/download/k8s.io/kubernetes/@v/v$v.info")
  ldflags="-s -w"
  for pkg in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
    ldflags+=" -X $pkg.gitVersion=v$v -X $pkg.gitMajor=1 -X $pkg.gitMinor=$(cut -d. -f2 <<<"$v")"
    ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=$date"
    ldflags+=" -X $pkg.gitCommit=go-module-k8s.io/kubernetes@v$v"
  done
  mkdir -p "$out.tmp"
  local pkgs=()
  for c in "${missing[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$c"); done
  (cd "$src" && go build -trimpath -ldflags "$ldflags" -o "$out.tmp/" "${pkgs[@]}")
  mkdir -p "$out"
  for c in "${missing[@]}"; do mv "$out.tmp/$c" "$out/$c"; done
  rmdir "$out.tmp"
  "$out/kubeadm" version -o short | grep -qx "v$v" || die "kubeadm v$v reports $("$out/kubeadm" version -o short)"
  log "kubernetes v$v: done"
}

build_etcd() {
  local ev=$1 out="$CACHE/etcd/v$1/bin" src mod gov tc
  if [ -x "$out/etcd" ] && [ -x "$out/etcdctl" ] && [ -x "$out/etcdutl" ]; then log "etcd v$ev: cached in $out"; return; fi
  mod=$(module_gomod "go.etcd.io/etcd/server/v3@v$ev") || die "go.etcd.io/etcd/server/v3@v$ev is not available from the Go module proxy"
  gov=$(sed -nE 's/^go ([0-9][0-9.]*)\s*$/\1/p' "$mod")
  tc=$(go_toolchain_for "$mod")
  local -x GOTOOLCHAIN=$tc
  log "etcd v$ev: building etcd, etcdctl, etcdutl with GOTOOLCHAIN=$GOTOOLCHAIN (its server go.mod: go $gov)"
  src="$CACHE/src/etcd-v$ev"; mkdir -p "$src" "$out.tmp"
  # The etcd modules also carry relative replaces among themselves; pin them all.
  cat >"$src/go.mod" <<MOD
module skewsafe.invalid/build/etcd

go $gov

require (
	go.etcd.io/etcd/server/v3 v$ev
	go.etcd.io/etcd/etcdctl/v3 v$ev
	go.etcd.io/etcd/etcdutl/v3 v$ev
)

replace (
	go.etcd.io/etcd/api/v3 => go.etcd.io/etcd/api/v3 v$ev
	go.etcd.io/etcd/client/pkg/v3 => go.etcd.io/etcd/client/pkg/v3 v$ev
	go.etcd.io/etcd/client/v3 => go.etcd.io/etcd/client/v3 v$ev
	go.etcd.io/etcd/pkg/v3 => go.etcd.io/etcd/pkg/v3 v$ev
	go.etcd.io/etcd/server/v3 => go.etcd.io/etcd/server/v3 v$ev
	go.etcd.io/etcd/etcdctl/v3 => go.etcd.io/etcd/etcdctl/v3 v$ev
	go.etcd.io/etcd/etcdutl/v3 => go.etcd.io/etcd/etcdutl/v3 v$ev
)
MOD
  (cd "$src" && go build -trimpath -ldflags "-s -w" -o "$out.tmp/" \
     go.etcd.io/etcd/server/v3 go.etcd.io/etcd/etcdctl/v3 go.etcd.io/etcd/etcdutl/v3)
  mkdir -p "$out"
  mv "$out.tmp/v3" "$out/etcd" 2>/dev/null || true
  for b in "$out.tmp"/*; do
    case "$(basename "$b")" in
      server) mv "$b" "$out/etcd" ;; etcdctl|etcdutl) mv "$b" "$out/" ;; *) mv "$b" "$out/" ;;
    esac
  done
  rmdir "$out.tmp"
  # not grep -q: it exits at the first match, etcd gets SIGPIPE on its next line and pipefail fails the check
  "$out/etcd" --version | grep "etcd Version: $ev" >/dev/null || die "etcd binary does not report $ev"
  log "etcd v$ev: done"
}

# The lab's pair must be adjacent entries of the harness list, so the harness proves what the lab runs.
read -ra harness_versions <<<"$K8S_HARNESS_VERSIONS"
case " ${harness_versions[*]} " in
  *" $K8S_OLD_VERSION $K8S_NEW_VERSION "*) ;;
  *) die "K8S_OLD_VERSION $K8S_OLD_VERSION and K8S_NEW_VERSION $K8S_NEW_VERSION must be adjacent in K8S_HARNESS_VERSIONS ($K8S_HARNESS_VERSIONS)" ;;
esac

start=$SECONDS
cmds=("${K8S_CMDS[@]}")
if [ "${1:-}" = --harness ]; then
  shift; cmds=("${HARNESS_CMDS[@]}")
  [ $# -gt 0 ] || die "--harness needs one or more versions"
fi
if [ $# -gt 0 ]; then
  for v in "$@"; do
    build_k8s "$v" "${cmds[@]}"
    build_etcd "$(check_etcd_pin "$v")"
  done
else
  for v in "${harness_versions[@]}"; do
    if [ "$v" = "$K8S_OLD_VERSION" ] || [ "$v" = "$K8S_NEW_VERSION" ]; then
      build_k8s "$v" "${K8S_CMDS[@]}"
    else
      build_k8s "$v" "${HARNESS_CMDS[@]}"
    fi
    build_etcd "$(check_etcd_pin "$v")"
  done
fi
log "all done in $((SECONDS - start))s; binaries under $CACHE/{k8s,etcd}/v*/bin"

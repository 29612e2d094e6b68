#!/usr/bin/env bash
# Build the control-plane image tarballs kubeadm wants, without any registry:
#   lab/build-images.sh [K8S_VERSION ...]   default: K8S_OLD_VERSION K8S_NEW_VERSION
#
# The image list and tags come from our own kubeadm:
#   kubeadm config images list --kubernetes-version vX.Y.Z --image-repository registry.k8s.io
# Binaries: ~/.cache/skewsafe/{k8s,etcd} (hack/build-upstream.sh), coredns and the pause
# binary from here (pause.c from the k8s.io/kubernetes module, gcc -static).
# kube-proxy gets a minimal Debian layer (iptables, conntrack, nftables) under its binary.
# Output: $LAB_CACHE/images/<ref with / and : as _>.tar (OCI layout + docker manifest.json)
# and $LAB_CACHE/images/v<K8S>.list (the refs for that version, in kubeadm's order).
set -euo pipefail
# shellcheck source=lab/lib.sh
. "$(dirname "$0")/lib.sh"

need cmd:go "the Go toolchain (go on PATH)"
need cmd:python3 "Python 3"
need cmd:gcc "apt-get install -y gcc"
need cmd:strip "apt-get install -y binutils"
need file:/usr/lib/x86_64-linux-gnu/libc.a "apt-get install -y libc6-dev"
need cmd:debootstrap "apt-get install -y debootstrap"
deps_checked

IMG=$LAB_CACHE/images
MKIMAGE=$LAB_DIR/files/mkimage.py
# bump when the image recipes below change (part of every cached file name)
RECIPE=1
mkdir -p "$IMG"
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=("$K8S_OLD_VERSION" "$K8S_NEW_VERSION")

img_file() { echo "$IMG/$(tr '/:' '__' <<<"$1").r$RECIPE.tar"; }

pause_bin() { # PAUSE_TAG K8S_VERSION -> path of a static pause binary
  local tag=$1 kv=$2 out="$LAB_CACHE/pause-$1/bin/pause" src
  if [ ! -x "$out" ]; then
    src="$(go env GOMODCACHE)/k8s.io/kubernetes@v$kv/build/pause/linux/pause.c"
    [ -f "$src" ] || go mod download "k8s.io/kubernetes@v$kv" >/dev/null
    mkdir -p "$(dirname "$out")"
    # upstream build/pause/Makefile: CFLAGS = -Os -Wall -Werror -static -DVERSION=v$(TAG)-$(REV)
    gcc -Os -Wall -Werror -static -DVERSION="v$tag-go-module-k8s.io/kubernetes@v$kv" -o "$out.tmp" "$src"
    strip "$out.tmp"; mv "$out.tmp" "$out"
    log "pause $tag: built $(du -h "$out" | cut -f1) static binary from k8s.io/kubernetes@v$kv"
  fi
  echo "$out"
}

kube_proxy_base() {
  local out="$LAB_CACHE/debian-$NODE_SUITE-kube-proxy-base.tar"
  debootstrap_tar "$out" iptables,nftables,conntrack,ebtables,ipset "$NODE_SUITE"
  echo "$out"
}

build_image() { # REF K8S_VERSION
  local ref=$1 kv=$2 name tag out bin t0=$SECONDS
  name=${ref%:*}; name=${name##*/}; tag=${ref##*:}
  out=$(img_file "$ref")
  if [ -f "$out" ]; then log "$ref: cached"; return; fi
  local args=(--out "$out" --tag "$ref")
  case "$name" in
    kube-apiserver|kube-controller-manager|kube-scheduler)
      bin="$(k8s_bin "${tag#v}")/$name"; [ -x "$bin" ] || die "$bin missing: run hack/build-upstream.sh ${tag#v}"
      args+=(--dir tmp:1777 --file "$bin:/usr/local/bin/$name" --entrypoint "[\"/usr/local/bin/$name\"]") ;;
    kube-proxy)
      bin="$(k8s_bin "${tag#v}")/$name"; [ -x "$bin" ] || die "$bin missing: run hack/build-upstream.sh ${tag#v}"
      kube_proxy_base >/dev/null
      args+=(--layer "$(kube_proxy_base)" --file "$bin:/usr/local/bin/$name" --entrypoint '["/usr/local/bin/kube-proxy"]') ;;
    etcd)
      local ev=${tag%-*} d="$CACHE/etcd/v${tag%-*}/bin"
      [ -x "$d/etcd" ] || die "$d/etcd missing: run hack/build-upstream.sh (etcd $ev)"
      args+=(--dir tmp:1777 --dir var/lib/etcd:0700 --file "$d/etcd:/usr/local/bin/etcd" --file "$d/etcdctl:/usr/local/bin/etcdctl"
             --file "$d/etcdutl:/usr/local/bin/etcdutl" --entrypoint '["/usr/local/bin/etcd"]') ;;
    pause)
      pause_bin "$tag" "$kv" >/dev/null
      args+=(--file "$(pause_bin "$tag" "$kv"):/pause" --user 65535:65535 --entrypoint '["/pause"]') ;;
    coredns)
      bin="$LAB_CACHE/coredns-${tag#v}/bin/coredns"
      [ -x "$bin" ] || die "$bin missing: run lab/build-deps.sh ${tag#v} (or BUILD_COREDNS=0)"
      args+=(--dir tmp:1777 --file "$bin:/coredns" --entrypoint '["/coredns"]') ;;
    *) die "no recipe for image $ref" ;;
  esac
  python3 "$MKIMAGE" "${args[@]}" >/dev/null
  log "$ref: $(du -h "$out" | cut -f1) in $((SECONDS - t0))s"
}

lab_lock build-images   # concurrent runs would race on the same output files
start=$SECONDS
for kv in "${versions[@]}"; do
  kubeadm="$(k8s_bin "$kv")/kubeadm"
  [ -x "$kubeadm" ] || die "$kubeadm missing: run hack/build-upstream.sh $kv"
  list=$("$kubeadm" config images list --kubernetes-version "v$kv" --image-repository registry.k8s.io)
  : >"$IMG/v$kv.list.tmp"
  for ref in $list; do
    if [[ $ref == */coredns/* ]] && [ "${BUILD_COREDNS:-1}" != 1 ]; then
      log "$ref: skipped (BUILD_COREDNS=0: the lab runs without CoreDNS)"; continue
    fi
    build_image "$ref" "$kv"
    echo "$ref $(img_file "$ref")" >>"$IMG/v$kv.list.tmp"
  done
  mv "$IMG/v$kv.list.tmp" "$IMG/v$kv.list"
done
log "all done in $((SECONDS - start))s; lists: $IMG/v*.list"

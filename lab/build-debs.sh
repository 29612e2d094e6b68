#!/usr/bin/env bash
# .deb packages of kubeadm, kubelet and kubectl with upstream names, version scheme and file
# layout, from the binaries hack/build-upstream.sh built; then a local apt repository with the
# per-minor layout of pkgs.k8s.io (a flat repository per minor):
#   lab/build-debs.sh [K8S_VERSION ...]     default: K8S_OLD_VERSION K8S_NEW_VERSION
#   -> $LAB_CACHE/debs/v<X.Y.Z>/{kubeadm,kubelet,kubectl}_<X.Y.Z>-1.1_amd64.deb   (cached by version)
#   -> $LAB_CACHE/repo/v<X.Y>/deb/{Packages,Packages.gz,Release,InRelease,Release.gpg,Release.key,amd64/*.deb}
# Signed like pkgs.k8s.io: the lab's own key (made once, $LAB_CACHE/repo-key) signs Release, and
# Release.key beside it is the armored public key. Client line (lab/install-k8s.sh, and the collection's
# packages role with skewsafe_package_repo_key_fingerprint = $LAB_CACHE/repo-key/fingerprint):
#   deb [signed-by=/etc/apt/keyrings/kubernetes-apt-keyring.gpg] http://$LAB_GATEWAY:$REPO_PORT/v1.36/deb/ /
#
# Contents as upstream's packages (kubernetes/release, krel templates "latest"):
#   kubelet: /usr/bin/kubelet, /usr/lib/systemd/system/kubelet.service, /etc/default/kubelet
#            (conffile, KUBELET_EXTRA_ARGS=), /var/lib/kubelet, /etc/kubernetes/manifests
#   kubeadm: /usr/bin/kubeadm, /usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf
#   kubectl: /usr/bin/kubectl
# Depends (minimal, all satisfied by the node image): kubelet: mount, util-linux;
# Recommends: iptables (>= 1.8.4). Upstream's kubelet also Depends on kubernetes-cni (>= 1.2.0);
# left out because the node image carries the CNI plugins built by lab/build-deps.sh (not as a
# package). kubeadm and kubectl have no Depends (as upstream since 1.32).
# Maintainer scripts: systemctl daemon-reload only; installing does not enable or start
# kubelet and upgrading does not restart it (operator's job, as with upstream's packages).
set -euo pipefail
# shellcheck source=lab/lib.sh
. "$(dirname "$0")/lib.sh"

PKG=$LAB_DIR/pkg
DEBS=$LAB_CACHE/debs
REPO=$LAB_CACHE/repo
REV=${DEB_REVISION:-1.1}
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=("$K8S_OLD_VERSION" "$K8S_NEW_VERSION")
need cmd:dpkg-deb "apt-get install -y dpkg"
need cmd:dpkg-scanpackages "apt-get install -y dpkg-dev"
need cmd:gpg "apt-get install -y gpg"
need cmd:gpg-agent "apt-get install -y gpg-agent"
deps_checked

# recipe hash: the packaging part of this script + lab/pkg/*; a change rebuilds every version's
# packages (byte for byte the same when nothing real changed: SOURCE_DATE_EPOCH, root owner)
recipe=$( { sed -n '/^# --- packages ---/,/^# --- repository ---/p' "$0"; cat "$PKG"/*; } | sha256sum | cut -c1-12)

# --- packages ---

# build_deb NAME VERSION SECTION DESCRIPTION [CONTROL LINES...]  (files staged in $stage by the caller)
build_deb() {
  local name=$1 kv=$2 section=$3 desc=$4 out size; shift 4
  out="$DEBS/v$kv/${name}_$kv-${REV}_amd64.deb"
  size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
  {
    echo "Package: $name"
    echo "Version: $kv-$REV"
    echo "Architecture: amd64"
    echo "Maintainer: Kubernetes Authors <dev@kubernetes.io>"
    echo "Installed-Size: $size"
    [ $# -eq 0 ] || printf '%s\n' "$@"
    echo "Section: $section"
    echo "Priority: optional"
    echo "Homepage: https://kubernetes.io"
    echo "Description: $desc"
    echo " Built by skewsafe.kubeadm's lab (lab/build-debs.sh) from Kubernetes v$kv"
    echo " sources of the Go module proxy; same name, version scheme and files as pkgs.k8s.io."
  } >"$stage/DEBIAN/control"
  install -m 0755 "$PKG/systemd-reload.postinst" "$stage/DEBIAN/postinst"
  install -m 0755 "$PKG/systemd-reload.postrm" "$stage/DEBIAN/postrm"
  # gzip: xz of 3 x 50-80 MB binaries costs minutes on 2 cores for nothing here
  SOURCE_DATE_EPOCH=$epoch dpkg-deb --root-owner-group -Zgzip -z6 --build "$stage" "$out.tmp" >/dev/null
  mv "$out.tmp" "$out"
  log "$(basename "$out"): $(du -h "$out" | cut -f1)"
}

build_version() {
  local kv=$1 bin v t0=$SECONDS
  bin=$(k8s_bin "$kv")
  for b in kubeadm kubelet kubectl; do [ -x "$bin/$b" ] || die "$bin/$b missing: run hack/build-upstream.sh $kv"; done
  if [ "$(cat "$DEBS/v$kv/.recipe" 2>/dev/null)" = "$recipe" ] \
     && [ -f "$DEBS/v$kv/kubeadm_$kv-${REV}_amd64.deb" ] && [ -f "$DEBS/v$kv/kubelet_$kv-${REV}_amd64.deb" ] \
     && [ -f "$DEBS/v$kv/kubectl_$kv-${REV}_amd64.deb" ]; then
    log "v$kv: cached in $DEBS/v$kv"; return
  fi
  v=$("$bin/kubeadm" version -o short); [ "$v" = "v$kv" ] || die "$bin/kubeadm is $v, not v$kv"
  rm -rf "$DEBS/v$kv"; mkdir -p "$DEBS/v$kv"
  epoch=$(stat -c %Y "$bin/kubelet")
  stage=$(mktemp -d "$LAB_CACHE/deb-stage.XXXXXX")
  trap 'rm -rf "$stage"' EXIT

  rm -rf "$stage"; mkdir -p "$stage/DEBIAN"
  install -D -m 0755 "$bin/kubelet" "$stage/usr/bin/kubelet"
  install -D -m 0644 "$PKG/kubelet.service" "$stage/usr/lib/systemd/system/kubelet.service"
  install -D -m 0644 "$PKG/kubelet.default" "$stage/etc/default/kubelet"
  # dpkg-deb keeps empty directories, but upstream ships keep files: do the same
  install -D -m 0644 /dev/null "$stage/var/lib/kubelet/.kubelet-keep"
  install -D -m 0644 /dev/null "$stage/etc/kubernetes/manifests/.kubelet-keep"
  echo /etc/default/kubelet >"$stage/DEBIAN/conffiles"
  install -m 0755 "$PKG/kubelet.prerm" "$stage/DEBIAN/prerm"
  build_deb kubelet "$kv" net "Node agent for Kubernetes clusters" \
    "Depends: mount, util-linux" "Recommends: iptables (>= 1.8.4)"

  rm -rf "$stage"; mkdir -p "$stage/DEBIAN"
  install -D -m 0755 "$bin/kubeadm" "$stage/usr/bin/kubeadm"
  install -D -m 0644 "$PKG/10-kubeadm.conf" "$stage/usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf"
  build_deb kubeadm "$kv" admin "Command-line utility for administering a Kubernetes cluster"

  rm -rf "$stage"; mkdir -p "$stage/DEBIAN"
  install -D -m 0755 "$bin/kubectl" "$stage/usr/bin/kubectl"
  build_deb kubectl "$kv" utils "Command-line utility for interacting with a Kubernetes cluster"

  rm -rf "$stage"; trap - EXIT
  echo "$recipe" >"$DEBS/v$kv/.recipe"
  log "v$kv: packages built in $((SECONDS - t0))s"
}

# --- repository ---
KEYDIR=$LAB_CACHE/repo-key
# repo_key: the lab's signing key, made once (RSA like upstream's; no passphrase: a lab key)
repo_key() {
  [ -s "$KEYDIR/fingerprint" ] && [ -s "$KEYDIR/Release.key" ] && return
  rm -rf "$KEYDIR"; mkdir -p "$KEYDIR"; mkdir -m 0700 "$KEYDIR/home"
  GNUPGHOME=$KEYDIR/home gpg --batch --quiet --passphrase '' \
    --quick-gen-key "skewsafe lab repository <lab@skewsafe.invalid>" rsa3072 sign 10y 2>/dev/null
  GNUPGHOME=$KEYDIR/home gpg --batch --armor --export >"$KEYDIR/Release.key"
  GNUPGHOME=$KEYDIR/home gpg --batch --with-colons --list-keys | awk -F: '/^fpr/ {print $10; exit}' >"$KEYDIR/fingerprint.tmp"
  mv "$KEYDIR/fingerprint.tmp" "$KEYDIR/fingerprint"
  log "repository key $(cat "$KEYDIR/fingerprint") ($KEYDIR)"
}

# index_minor X.Y: (re)write the flat repository of one minor from every cached version of it
index_minor() {
  local minor=$1 dir="$REPO/v$1/deb" f stamp
  mkdir -p "$dir/amd64"
  stamp=$( { stat -c '%n %s %Y' "$DEBS"/v"$minor".*/*.deb 2>/dev/null; cat "$KEYDIR/fingerprint"; } | sha256sum | cut -c1-16)
  if [ -f "$dir/InRelease" ] && [ "$(cat "$dir/.stamp" 2>/dev/null)" = "$stamp" ]; then
    log "repo v$minor: up to date ($dir)"; return
  fi
  # hard links: no copy of ~150 MB per version (same filesystem as $DEBS)
  find "$dir/amd64" -name '*.deb' -delete
  for f in "$DEBS"/v"$minor".*/*.deb; do
    [ -f "$f" ] && { ln "$f" "$dir/amd64/" 2>/dev/null || cp "$f" "$dir/amd64/"; }
  done
  (cd "$dir" && dpkg-scanpackages --multiversion amd64 /dev/null 2>/dev/null >Packages.tmp)
  mv "$dir/Packages.tmp" "$dir/Packages"
  gzip -9nc "$dir/Packages" >"$dir/Packages.gz"
  {
    echo "Origin: skewsafe-lab"
    echo "Label: skewsafe-lab core:/stable:/v$minor"
    echo "Architectures: amd64"
    echo "Date: $(LC_ALL=C date -u -R)"
    echo "Description: local lab copy of the pkgs.k8s.io layout for Kubernetes v$minor"
    echo "MD5Sum:"
    for f in Packages Packages.gz; do echo " $(md5sum <"$dir/$f" | cut -d' ' -f1) $(stat -c %s "$dir/$f") $f"; done
    echo "SHA256:"
    for f in Packages Packages.gz; do echo " $(sha256sum <"$dir/$f" | cut -d' ' -f1) $(stat -c %s "$dir/$f") $f"; done
  } >"$dir/Release"
  GNUPGHOME=$KEYDIR/home gpg --batch --yes --quiet --clearsign -o "$dir/InRelease" "$dir/Release"
  GNUPGHOME=$KEYDIR/home gpg --batch --yes --quiet --armor --detach-sign -o "$dir/Release.gpg" "$dir/Release"
  cp "$KEYDIR/Release.key" "$dir/Release.key"
  echo "$stamp" >"$dir/.stamp"
  log "repo v$minor: $(grep -c '^Package:' "$dir/Packages") packages -> $dir"
}

lab_lock build-debs
start=$SECONDS
repo_key
minors=()
for kv in "${versions[@]}"; do
  build_version "$kv"
  minors+=("${kv%.*}")
done
for m in $(printf '%s\n' "${minors[@]}" | sort -uV); do index_minor "$m"; done
# signing started a gpg-agent for the key's home: not left running after the build
gpgconf --homedir "$KEYDIR/home" --kill gpg-agent 2>/dev/null || true
log "all done in $((SECONDS - start))s"

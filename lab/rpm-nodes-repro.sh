#!/usr/bin/env bash
# Reproduces the findings in lab/rpm-nodes.md end to end in /tmp/rpmlab/repro (a few seconds of CPU).
# Needs: apt-get install -y --no-install-recommends dnf python3-dnf dnf-plugins-core rpm createrepo-c gpg
set -euo pipefail
W=/tmp/rpmlab/repro PORT=${PORT:-18098}
rm -rf "$W"; mkdir -p "$W"; cd "$W"
export HOME=$W/home GNUPGHOME=$W/gnupg   # Debian's rpm keeps its db in ~/.rpmdb: keep the host's untouched
mkdir -p "$HOME"; mkdir -m 0700 "$GNUPGHOME"

# --- throwaway signing key (RSA, like pkgs.k8s.io's OBS key) ---
gpg --batch --quiet --passphrase '' --quick-gen-key "rpmlab repo <lab@rpmlab.invalid>" rsa3072 sign 1y
FPR=$(gpg --with-colons --list-keys | awk -F: '/^fpr/{print $10; exit}')

# --- packages: upstream name/version/release scheme (kubeadm-1.36.5-150500.1.1.x86_64) ---
cat >kubeadm.spec <<'EOF'
Name:           kubeadm
Version:        %{kv}
Release:        150500.1.1
Summary:        Command-line utility for administering a Kubernetes cluster
License:        Apache-2.0
BuildArch:      x86_64
%global debug_package %{nil}
%global __os_install_post %{nil}
%description
Lab stand-in for pkgs.k8s.io kubeadm %{kv}.
%install
install -D -m 0755 /dev/stdin %{buildroot}/usr/bin/kubeadm <<EOS
#!/bin/sh
echo v%{kv}
EOS
%files
/usr/bin/kubeadm
EOF
# The node's rpmdb is empty (dpkg owns the system): tell rpm what dpkg already provides.
cat >shim.spec <<'EOF'
Name:           lab-debian-provides
Version:        12
Release:        2
Summary:        What dpkg already installed on this node, for rpm's dependency checks
License:        MIT
BuildArch:      noarch
Provides:       /bin/sh /usr/bin/sh /bin/bash util-linux mount iptables = 1.8.9 iproute systemd
Provides:       system-release(releasever) = 12
%description
Lab only.
%files
EOF
for v in 1.36.5 1.37.2; do rpmbuild -bb --quiet --define "_topdir $W/rpmbuild" --define "kv $v" kubeadm.spec; done
rpmbuild -bb --quiet --define "_topdir $W/rpmbuild" shim.spec
# Debian's rpm has %__gpg /usr/bin/gpg2 (absent): point it at gpg
rpmsign --define "__gpg /usr/bin/gpg" --define "_gpg_name $FPR" --addsign rpmbuild/RPMS/*/*.rpm </dev/null >/dev/null 2>&1

# --- one flat repository per minor, pkgs.k8s.io layout: v1.NN/rpm/{*.rpm,repodata/repomd.xml{,.asc,.key}} ---
for kv in 1.36.5 1.37.2; do
  d=repo/v${kv%.*}/rpm; mkdir -p "$d"; cp rpmbuild/RPMS/x86_64/kubeadm-$kv-*.rpm "$d/"
  createrepo_c -q --general-compress-type=gz "$d"
  gpg --batch --yes --armor --detach-sign -o "$d/repodata/repomd.xml.asc" "$d/repodata/repomd.xml"
  gpg --batch --armor --export "$FPR" >"$d/repodata/repomd.xml.key"
done
setsid python3 -m http.server --bind 127.0.0.1 --directory "$W/repo" "$PORT" >http.log 2>&1 &
echo $! >http.pid; trap 'kill "$(cat "$W/http.pid")"' EXIT
for _ in $(seq 50); do curl -fsS -o /dev/null "http://127.0.0.1:$PORT/" 2>/dev/null && break; sleep 0.1; done

# --- the "node": an installroot with its own dnf.conf, plugin conf, repos dir, rpmdb ---
R=$W/root; mkdir -p "$R/etc/yum.repos.d" "$R/etc/dnf/plugins"
printf '[main]\ngpgcheck=True\nbest=False\nskip_if_unavailable=False\npluginconfpath=%s/etc/dnf/plugins\nreposdir=%s/etc/yum.repos.d\n' "$R" "$R" >"$R/etc/dnf/dnf.conf"
printf '[main]\nenabled = 1\nlocklist = %s/etc/dnf/plugins/versionlock.list\n' "$R" >"$R/etc/dnf/plugins/versionlock.conf"
printf '[main]\nenabled = false\n' >"$R/etc/dnf/plugins/local.conf"   # Debian enables the local plugin
: >"$R/etc/dnf/plugins/versionlock.list"
rpm --root "$R" -i rpmbuild/RPMS/noarch/lab-debian-provides-12-2.noarch.rpm 2>/dev/null
repo() { cat >"$R/etc/yum.repos.d/kubernetes.repo" <<EOF
[kubernetes]
name=Kubernetes
baseurl=http://127.0.0.1:$PORT/v$1/rpm/
enabled=1
gpgcheck=1
repo_gpgcheck=1
gpgkey=http://127.0.0.1:$PORT/v$1/rpm/repodata/repomd.xml.key
exclude=kubelet kubeadm kubectl cri-tools kubernetes-cni
EOF
}
D=(dnf -y -q --installroot="$R" --config="$R/etc/dnf/dnf.conf")
step() { echo "== $*"; }

repo 1.36
step "install 1.36.5 (--disableexcludes=kubernetes)"; "${D[@]}" --refresh install --disableexcludes=kubernetes kubeadm-1.36.5
"$R/usr/bin/kubeadm"
step "lock"; "${D[@]}" versionlock add kubeadm; grep -v '^#' "$R/etc/dnf/plugins/versionlock.list" | grep .
repo 1.37
step "upgrade without --disableexcludes (expect: nothing)"; "${D[@]}" --refresh upgrade 2>&1 || true; "$R/usr/bin/kubeadm"
step "install 1.37.2 while locked (expect: filtered out)"; "${D[@]}" install --disableexcludes=kubernetes kubeadm-1.37.2 2>&1 || true
step "unlock, install 1.37.2, lock again"
"${D[@]}" versionlock delete kubeadm
"${D[@]}" install --disableexcludes=kubernetes kubeadm-1.37.2
"${D[@]}" versionlock add kubeadm
"$R/usr/bin/kubeadm"; grep -v '^#' "$R/etc/dnf/plugins/versionlock.list" | grep .
rpm --root "$R" -q kubeadm gpg-pubkey 2>/dev/null

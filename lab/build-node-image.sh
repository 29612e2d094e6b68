#!/usr/bin/env bash
# Build the kind-style node image from Debian packages (debootstrap) plus the runtime built by
# lab/build-deps.sh (containerd 2, runc, crictl, CNI plugins). No kubelet/kubeadm inside: those
# come as .deb packages from the lab repository (lab/build-debs.sh, lab/install-k8s.sh).
#
#   lab/build-node-image.sh      -> $LAB_CACHE/node-images/<tag>.tar, loaded into the own dockerd
#                                   if it is running; prints the image tag last.
# The tag is sslab/node:<suite>-<hash of pins + this script + lab/files>, so any change rebuilds.
set -euo pipefail
# shellcheck source=lab/lib.sh
. "$(dirname "$0")/lib.sh"

need cmd:go "the Go toolchain (go on PATH)"
need cmd:debootstrap "apt-get install -y debootstrap"
need cmd:ssh-keygen "apt-get install -y openssh-client"
deps_checked

NODE_PKGS=systemd,systemd-sysv,dbus,iproute2,iptables,nftables,ca-certificates,openssh-server,\
python3,python3-apt,conntrack,socat,ebtables,ethtool,ipset,kmod,procps,util-linux,mount,\
iputils-ping,less,jq,pigz,libseccomp2,gpg,curl,sudo,apt-utils
PAUSE_IMAGE="registry.k8s.io/pause:$(kubeadm_const "$K8S_OLD_VERSION" PauseVersion)"
[ "$PAUSE_IMAGE" != "registry.k8s.io/pause:" ] || die "cannot read kubeadm PauseVersion"
[ "$(kubeadm_const "$K8S_NEW_VERSION" PauseVersion)" = "${PAUSE_IMAGE##*:}" ] \
  || log "WARNING: kubeadm v$K8S_NEW_VERSION wants another pause tag; preload both"

# the lab ssh key (baked into root's authorized_keys)
SSH_DIR=$LAB_CACHE/ssh
if [ ! -f "$SSH_DIR/id_ed25519" ]; then
  mkdir -p "$SSH_DIR"; ssh-keygen -q -t ed25519 -N '' -C "$LAB_NAME-lab" -f "$SSH_DIR/id_ed25519"
fi

D=$LAB_CACHE
BINS=("$D/containerd-$CONTAINERD_VERSION/bin/containerd" "$D/containerd-$CONTAINERD_VERSION/bin/containerd-shim-runc-v2"
      "$D/containerd-$CONTAINERD_VERSION/bin/ctr" "$D/runc-$RUNC_VERSION/bin/runc" "$D/crictl-$CRICTL_VERSION/bin/crictl")
for b in "${BINS[@]}"; do [ -x "$b" ] || die "$b missing: run lab/build-deps.sh"; done
hash=$( { echo "$NODE_PKGS $LAB_SSH_USER $PAUSE_IMAGE $NODE_SUITE $NODE_IMAGE_REV $CONTAINERD_VERSION $RUNC_VERSION $CRICTL_VERSION $CNI_PLUGINS_VERSION";
          cat "$0" "$LAB_DIR"/files/* "$SSH_DIR/id_ed25519.pub"; } | sha256sum | cut -c1-12)
TAG="$LAB_NAME/node:$NODE_SUITE-$hash"
OUT="$LAB_CACHE/node-images/$NODE_SUITE-$hash.tar"
mkdir -p "$(dirname "$OUT")"

lab_lock build-node-image   # concurrent runs would race on the same output files
if [ -f "$OUT" ]; then
  log "$TAG: cached ($OUT)"
else
  t0=$SECONDS
  pkghash=$(sha256sum <<<"$NODE_PKGS" | cut -c1-8)
  BASE="$LAB_CACHE/debian-$NODE_SUITE-node-base-$pkghash.tar"
  debootstrap_tar "$BASE" "$NODE_PKGS" "$NODE_SUITE"
  R=$(mktemp -d "$LAB_CACHE/node-rootfs.XXXXXX")
  trap 'rm -rf "$R"' EXIT
  tar -C "$R" --numeric-owner --xattrs --xattrs-include='security.capability' -xf "$BASE"

  # runtime built here
  install -m 0755 "$D/containerd-$CONTAINERD_VERSION"/bin/{containerd,containerd-shim-runc-v2,ctr} "$D/crictl-$CRICTL_VERSION/bin/crictl" "$R/usr/local/bin/"
  install -m 0755 "$D/runc-$RUNC_VERSION/bin/runc" "$R/usr/local/sbin/runc"
  install -d "$R/opt/cni/bin" "$R/etc/cni/net.d" "$R/etc/containerd"
  install -m 0755 "$D/cni-plugins-$CNI_PLUGINS_VERSION"/bin/* "$R/opt/cni/bin/"
  install -m 0644 "$LAB_DIR/files/containerd.service" "$R/etc/systemd/system/containerd.service"
  sed "s#@PAUSE_IMAGE@#$PAUSE_IMAGE#" "$LAB_DIR/files/containerd-config.toml" >"$R/etc/containerd/config.toml"
  install -m 0644 "$LAB_DIR/files/crictl.yaml" "$R/etc/crictl.yaml"
  install -m 0755 "$LAB_DIR/files/entrypoint" "$R/usr/local/bin/entrypoint"
  printf 'containerd %s\nrunc %s\ncrictl %s\ncni-plugins %s\npause %s\n' "$CONTAINERD_VERSION" "$RUNC_VERSION" \
    "$CRICTL_VERSION" "$CNI_PLUGINS_VERSION" "$PAUSE_IMAGE" >"$R/etc/$LAB_NAME-node-versions"

  # systemd in a container, after kind's base Dockerfile (keep systemd-user-sessions: /run/nologin)
  rm -f "$R/lib/systemd/system/sysinit.target.wants/systemd-tmpfiles-setup.service"
  find "$R/lib/systemd/system/multi-user.target.wants/" -mindepth 1 -not -name 'systemd-user-sessions.service' -delete
  rm -f "$R"/etc/systemd/system/*.wants/* "$R"/lib/systemd/system/local-fs.target.wants/* \
        "$R"/lib/systemd/system/sockets.target.wants/*udev* "$R"/lib/systemd/system/sockets.target.wants/*initctl* \
        "$R"/lib/systemd/system/basic.target.wants/*
  install -d "$R/etc/systemd/journald.conf.d"
  printf '[Journal]\nReadKMsg=no\nStorage=volatile\n' >"$R/etc/systemd/journald.conf.d/10-container.conf"
  chroot "$R" systemctl enable containerd.service ssh.service >/dev/null 2>&1
  chroot "$R" systemctl mask systemd-binfmt.service getty@tty1.service serial-getty@.service \
    apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer fstrim.timer systemd-udevd.service \
    systemd-modules-load.service sys-kernel-config.mount sys-kernel-debug.mount >/dev/null 2>&1 || true
  chroot "$R" systemctl set-default multi-user.target >/dev/null 2>&1

  # sysctls kubelet/kube-proxy expect (in the node's netns)
  printf 'net.ipv4.ip_forward=1\nnet.ipv4.conf.all.rp_filter=0\nfs.inotify.max_user_watches=524288\nfs.inotify.max_user_instances=512\n' \
    >"$R/etc/sysctl.d/10-kubernetes.conf"

  # ssh: per-node host keys (entrypoint), the lab key for root and for $LAB_SSH_USER, the non-root user
  # Ansible connects as (sudo without a password, as operators' nodes grant their automation user)
  rm -f "$R"/etc/ssh/ssh_host_*
  install -d -m 0700 "$R/root/.ssh"
  install -m 0600 "$SSH_DIR/id_ed25519.pub" "$R/root/.ssh/authorized_keys"
  chroot "$R" useradd --create-home --shell /bin/bash --uid 1001 "$LAB_SSH_USER"
  install -d -m 0700 -o 1001 -g 1001 "$R/home/$LAB_SSH_USER/.ssh"
  install -m 0600 -o 1001 -g 1001 "$SSH_DIR/id_ed25519.pub" "$R/home/$LAB_SSH_USER/.ssh/authorized_keys"
  printf '%s ALL=(ALL:ALL) NOPASSWD: ALL\n' "$LAB_SSH_USER" >"$R/etc/sudoers.d/$LAB_SSH_USER"
  chmod 0440 "$R/etc/sudoers.d/$LAB_SSH_USER"
  # no Debian sources: nodes have no route out, so any would break `apt-get update`; the only
  # source is the lab repository (lab/install-k8s.sh writes sources.list.d/kubernetes.list)
  printf '# no Debian sources in the lab (no route out); see sources.list.d/kubernetes.list\n' >"$R/etc/apt/sources.list"
  rm -f "$R"/etc/apt/sources.list.d/*
  # static pod routes of lab/cni.sh, re-applied before every kubelet start
  install -m 0755 "$LAB_DIR/files/lab-pod-routes" "$R/usr/local/sbin/lab-pod-routes"
  install -D -m 0644 "$LAB_DIR/files/20-lab-pod-routes.conf" "$R/etc/systemd/system/kubelet.service.d/20-lab-pod-routes.conf"
  : >"$R/etc/machine-id"
  rm -rf "$R"/usr/share/doc/* "$R"/usr/share/man/* "$R"/usr/share/info/* "$R"/var/cache/apt/*.bin

  tar -C "$R" --numeric-owner --xattrs --xattrs-include='security.capability' -cf "$OUT.layer" .
  rm -rf "$R"; trap - EXIT
  python3 "$LAB_DIR/files/mkimage.py" --out "$OUT.tmp" --tag "$TAG" --layer "$OUT.layer" \
    --env container=docker --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --stopsignal SIGRTMIN+3 --entrypoint '["/usr/local/bin/entrypoint", "/sbin/init"]' >/dev/null
  rm -f "$OUT.layer"; mv "$OUT.tmp" "$OUT"
  # keep only the current node image tarball of this suite
  find "$(dirname "$OUT")" -maxdepth 1 -name "$NODE_SUITE-*.tar" ! -name "$(basename "$OUT")" -delete
  log "$TAG: built $(du -h "$OUT" | cut -f1) in $((SECONDS - t0))s"
fi

if "$LAB_DIR/dockerd.sh" status >/dev/null 2>&1; then
  if ! ldocker image inspect "$TAG" >/dev/null 2>&1; then
    t0=$SECONDS; ldocker load -i "$OUT" >/dev/null; log "$TAG: loaded into the lab dockerd in $((SECONDS - t0))s"
  fi
fi
echo "$TAG"

#!/usr/bin/env bash
# Tier `host-deps`: is hack/host-packages.txt complete, and is each entry needed?
#
# In a minimal Debian rootfs of the host's release (debootstrap --variant=minbase, cached), with
# only the machine's own toolchains (Go, Python) mounted in:
#  1. hack/host-deps.sh install installs the list, and every script's dependency check
#     (CHECK_DEPS_ONLY=1) passes - the list holds everything the README commands need;
#  2. for each entry: with that package removed and the list without it, install changes nothing
#     and some script's check fails naming the missing command or file - no entry is dead weight,
#     and a package missing from the list is caught here, not on a fresh machine's CI run.
# No builds run. Needs root (chroot, mounts) and the Debian mirror.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=lab/lib.sh
. "$repo/lab/lib.sh"

# The scripts whose dependency checks are run, with the arguments that reach them.
CHECKS=(
  "hack/test.sh"
  "hack/build-upstream.sh"
  "hack/harness.sh"
  "hack/controller/run.sh"
  "hack/ee/run.sh build"
  "lab/build-deps.sh"
  "lab/build-debs.sh"
  "lab/build-images.sh"
  "lab/build-node-image.sh"
  "lab/dockerd.sh start"
  "lab/repo-server.sh start"
  "lab/up.sh"
)
suite=$(. /etc/os-release && echo "$VERSION_CODENAME")
HD=$CACHE/host-deps
# shellcheck disable=SC2034  # read by debootstrap_tar (ansible-test's shellcheck does not follow sources)
LAB_CACHE=$HD # debootstrap_tar keeps its scratch rootfs and .debs here
base=$HD/minbase-$suite.tar
t0=$SECONDS
mkdir -p "$HD/archives/partial"
debootstrap_tar "$base" "" "$suite"

root=$(mktemp -d "$HD/root.XXXXXX")
mounts=()
cleanup() {
  local i
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount "${mounts[$i]}" 2>/dev/null || umount -l "${mounts[$i]}" || true; done
  # never across a mount point: a bind mount still attached (/dev, the checkout) must survive
  if findmnt -rn -o TARGET | grep "^$root/" >/dev/null; then  # not -q: SIGPIPE under pipefail
    log "WARNING: mounts left under $root; not removing it"
  else
    rm -rf --one-file-system "$root"
  fi
}
trap cleanup EXIT
bind() { # SRC DEST [ro]
  mkdir -p "$root$2"
  mount --bind "$1" "$root$2"
  mounts+=("$root$2")
  [ "${3:-}" != ro ] || mount -o remount,bind,ro "$root$2"
}
tar -C "$root" -xf "$base"
cp /etc/resolv.conf "$root/etc/resolv.conf"
cp -a /etc/apt/sources.list.d/. "$root/etc/apt/sources.list.d/"
[ ! -f /etc/apt/sources.list ] || cp /etc/apt/sources.list "$root/etc/apt/sources.list"
cp -a /etc/apt/apt.conf.d/. "$root/etc/apt/apt.conf.d/"
rm -f "$root/etc/apt/apt.conf.d/docker-clean" # keep the .debs in the shared archive cache
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d" # no services start in the chroot
chmod 0755 "$root/usr/sbin/policy-rc.d"
bind /proc /proc
bind /dev /dev
bind "$HD/archives" /var/cache/apt/archives
bind "$repo" /src ro
# The machine's own toolchains (not Debian packages here): Go, and the Python the project uses.
gobin=$(dirname "$(readlink -f "$(command -v go)")")
goroot=$(dirname "$gobin")
bind "$goroot" "$goroot" ro
pybin=$(dirname "$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')")
pyroot=$(dirname "$pybin")
bind "$pyroot" "$pyroot" ro
PATH_IN="$gobin:$pybin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

in_root() { chroot "$root" /usr/bin/env -i HOME=/root PATH="$PATH_IN" SKEWSAFE_CACHE=/tmp/cache "$@"; }

# Every check, run inside the rootfs; prints the failures, returns non-zero if any failed.
run_checks() {
  local c out rc=0
  for c in "${CHECKS[@]}"; do
    # shellcheck disable=SC2086  # the entry holds the script and its arguments
    if ! out=$(in_root env CHECK_DEPS_ONLY=1 bash /src/$c 2>&1); then
      printf '  %s: %s\n' "$c" "$(tail -n 1 <<<"$out")"
      rc=1
    fi
  done
  return $rc
}

log "installing the list into a minimal $suite rootfs"
in_root apt-get update -qq
in_root bash /src/hack/host-deps.sh install
if ! failures=$(run_checks); then
  printf '%s\n' "$failures" >&2
  die "a dependency check fails with every listed package installed: hack/host-packages.txt lacks a package"
fi
log "1/2 every dependency check passes with the list installed ($((SECONDS - t0))s)"

bad=0
entries=$(sed -e 's/#.*//' "$repo/hack/host-packages.txt" | awk 'NF >= 2 {print $1, $2}')
while read -r pkg probe; do
  grep -v "^$pkg " <<<"$entries" >"$root/tmp/list-without"
  in_root dpkg --purge --force-depends --force-remove-essential "$pkg" >/dev/null 2>&1 || true
  # what a fresh machine would have if the entry were not in the list
  in_root env HOST_PACKAGES=/tmp/list-without bash /src/hack/host-deps.sh install >/dev/null 2>&1 || true
  if failures=$(run_checks); then
    log "ERROR: without $pkg (${probe#*:}) every dependency check still passes: no script checks for it"
    bad=1
  elif ! grep -qF -- "${probe#*:} is missing" <<<"$failures"; then
    log "ERROR: without $pkg the checks fail, but none names ${probe#*:}:"
    printf '%s\n' "$failures" >&2
    bad=1
  else
    log "without $pkg: $(grep -cF -- "${probe#*:} is missing" <<<"$failures") check(s) name ${probe#*:}"
  fi
  in_root apt-get install -y -qq --no-install-recommends "$pkg" >/dev/null 2>&1 \
    || in_root apt-get -f install -y -qq --no-install-recommends >/dev/null
done <<<"$entries"
[ $bad = 0 ] || die "hack/host-packages.txt and the scripts' dependency checks disagree (see above)"
log "2/2 each of $(wc -l <<<"$entries") entries is checked by a script ($((SECONDS - t0))s)"

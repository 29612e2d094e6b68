#!/usr/bin/env bash
# make demo: a real kubeadm HA cluster at the older pinned version in containers, then the
# collection upgrades it to the newer one with live progress, then the report.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=hack/env.sh
. "$repo/hack/env.sh"
# shellcheck source=hack/versions.env
set -a; . "$repo/hack/versions.env"; set +a
LAB_RUN=${SKEWSAFE_CACHE}/lab/run

TIERS=setup "$repo/hack/test.sh" >/dev/null || { echo "setup failed: run TIERS=setup hack/test.sh" >&2; exit 1; }
"$repo/hack/build-upstream.sh"
# Always from a fresh cluster at the older version (a kept lab may already be upgraded).
"$repo/lab/down.sh"
"$repo/lab/up.sh"

artifacts="$LAB_RUN/artifacts"
rm -rf "$artifacts" && mkdir -p "$artifacts"
echo "== upgrading the lab cluster to v$K8S_NEW_VERSION (inventory $LAB_RUN/inventory.ini)"
start=$SECONDS
PATH="$VENV/bin:$PATH" ANSIBLE_CALLBACKS_ENABLED=ansible.posix.profile_tasks ANSIBLE_FORCE_COLOR=1 \
  ansible-playbook -i "$LAB_RUN/inventory.ini" skewsafe.kubeadm.upgrade \
  -e skewsafe_kubernetes_version="$K8S_NEW_VERSION" -e skewsafe_artifacts_dir="$artifacts" "$@"
echo "== upgrade finished in $((SECONDS - start)) s"
report=$(find "$artifacts/reports" -name 'upgrade-*.md' | sort | tail -1)
echo "== report: $report"
cat "$report"

#!/usr/bin/env bash
# Run the test harness CLI with the same venv and collection path `make test` uses.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=hack/deps.sh
. "$repo/hack/deps.sh"
# own UTS and network namespaces per API server; openssl for certificates kubeadm would not issue
need cmd:unshare "apt-get install -y util-linux"
need cmd:ip "apt-get install -y iproute2"
need cmd:openssl "apt-get install -y openssl"
deps_checked
TIERS=setup "$repo/hack/test.sh" >/dev/null || { echo "setup failed; run: TIERS=setup hack/test.sh" >&2; exit 1; }
# shellcheck source=/dev/null
. "$repo/hack/env.sh"
cd "$repo/tests/harness"
exec "$VENV/bin/python" -m skewsafe_harness "$@"

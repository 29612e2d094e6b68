#!/usr/bin/env bash
# Run the test harness CLI with the same venv and collection path `make test` uses.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
TIERS=setup "$repo/hack/test.sh" >/dev/null || { echo "setup failed; run: TIERS=setup hack/test.sh" >&2; exit 1; }
# shellcheck source=/dev/null
. "$repo/hack/env.sh"
cd "$repo/tests/harness"
exec "$VENV/bin/python" -m skewsafe_harness "$@"
